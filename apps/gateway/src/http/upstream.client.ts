// Upstream calls through undici keep-alive pools, one per origin. No overall timeout (streams may
// run long); a first-byte timeout, a connect timeout and an idle bound between body bytes bound a
// dead or stalled provider. Errors never carry
// the upstream URL back to the client.
import { EventEmitter } from 'node:events';
import { Agent, request } from 'undici';
import type { Readable, Writable } from 'node:stream';
import { type UpstreamReply, joinedIfSmall, totalBytes } from '@context-guru/engine';

export interface UpstreamOptions {
  headersTimeoutMs: number;
  /** Longest silence between two body bytes before the body fails and its socket is dropped. */
  idleTimeoutMs: number;
  connectTimeoutMs: number;
}

class UpstreamError extends Error {
  constructor(
    readonly kind: 'timeout' | 'unreachable',
    cause: unknown,
  ) {
    super(kind === 'timeout' ? 'upstream timed out' : 'upstream request failed', { cause });
  }
}

/** A dead provider (no headers in time) or a stalled one (no body byte in time). */
export function isUpstreamTimeout(err: unknown): boolean {
  if (err instanceof UpstreamError) return err.kind === 'timeout';
  return (err as { code?: string } | null)?.code === 'UND_ERR_BODY_TIMEOUT';
}

/**
 * Cancels a request's upstream calls when its client goes away. undici takes an EventEmitter as a
 * signal; this costs a fraction of an AbortController (and its DOMException) on every request.
 */
export class ClientAbort extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }

  /** A response that closes before it finished is a client that went away. */
  watch(res: Writable): this {
    res.on('close', () => {
      if (!res.writableFinished) this.abort();
    });
    return this;
  }
}

function isChunks(body: string | Buffer | readonly Buffer[] | Readable): body is readonly Buffer[] {
  return Array.isArray(body);
}

/**
 * Chunks go out one after another under their exact total as content-length (undici writes an
 * iterable body as it comes, and fails the request if the bytes do not add up to the header).
 * The caller's headers are not touched: an expand continuation sends another body with them.
 * @internal exported for its test
 */
export function chunked(headers: Record<string, string>, chunks: readonly Buffer[]): { headers: Record<string, string>; body: Buffer } {
  const body = joinedIfSmall(chunks);
  if (Buffer.isBuffer(body)) return { headers, body };
  // undici takes any iterable of chunks as a body; its types list only the single-value kinds.
  return { headers: { ...headers, 'content-length': String(totalBytes(body)) }, body: body as unknown as Buffer };
}

/** Upstream connections per origin (the bound on whole bodies held in memory follows it). */
export const UPSTREAM_CONNECTIONS = 128;

export class UpstreamClient {
  private readonly dispatcher: Agent;

  constructor(private readonly opts: UpstreamOptions) {
    this.dispatcher = new Agent({
      keepAliveTimeout: 30_000,
      connections: UPSTREAM_CONNECTIONS,
      connect: { timeout: opts.connectTimeoutMs },
      headersTimeout: opts.headersTimeoutMs,
      bodyTimeout: opts.idleTimeoutMs,
    });
  }

  post(
    url: string,
    headers: Record<string, string>,
    body: string | Buffer | readonly Buffer[] | Readable,
    signal?: AbortSignal | ClientAbort,
  ): Promise<UpstreamReply> {
    return this.send('POST', url, headers, body, signal);
  }

  /** Any method (the pass-through routes); `body` undefined sends none. */
  async send(
    method: 'GET' | 'POST' | 'DELETE' | 'PATCH',
    url: string,
    headers: Record<string, string>,
    body: string | Buffer | readonly Buffer[] | Readable | undefined,
    signal?: AbortSignal | ClientAbort,
  ): Promise<UpstreamReply> {
    try {
      const sent = body !== undefined && isChunks(body) ? chunked(headers, body) : { headers, body };
      const res = await request(url, { method, ...sent, signal, dispatcher: this.dispatcher });
      return { status: res.statusCode, headers: res.headers, body: res.body as unknown as Readable };
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') throw new UpstreamError('timeout', err);
      throw new UpstreamError('unreachable', err);
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}
