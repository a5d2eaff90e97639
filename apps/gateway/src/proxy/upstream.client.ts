// Upstream calls through undici keep-alive pools, one per origin. No overall timeout (streams may
// run long); a first-byte timeout and a connect timeout bound a dead provider. Errors never carry
// the upstream URL back to the client.
import { Agent, request } from 'undici';
import type { Readable } from 'node:stream';
import type { UpstreamReply } from '../expand/expand.types';

export interface UpstreamOptions {
  headersTimeoutMs: number;
  connectTimeoutMs: number;
}

export class UpstreamError extends Error {
  constructor(
    readonly kind: 'timeout' | 'unreachable',
    cause: unknown,
  ) {
    super(kind === 'timeout' ? 'upstream timed out' : 'upstream request failed', { cause });
  }
}

export class UpstreamClient {
  private readonly dispatcher: Agent;

  constructor(private readonly opts: UpstreamOptions) {
    this.dispatcher = new Agent({
      keepAliveTimeout: 30_000,
      connections: 128,
      connect: { timeout: opts.connectTimeoutMs },
      headersTimeout: opts.headersTimeoutMs,
      bodyTimeout: 0,
    });
  }

  async post(url: string, headers: Record<string, string>, body: string | Buffer, signal?: AbortSignal): Promise<UpstreamReply> {
    try {
      const res = await request(url, { method: 'POST', headers, body, signal, dispatcher: this.dispatcher });
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
