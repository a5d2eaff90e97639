// One model call over HTTP with everything the gateway owes its operator around it: the process-wide
// concurrency cap, a per-call deadline that includes waiting for a slot, spend recorded on every
// path, and errors that never carry the endpoint URL or a credential.
import { Agent, request } from 'undici';
import type { Dialect, ModelClient, ModelReply, ModelRequest, ReplyCache, SandboxPool } from '@context-guru/components';
import type { ConcurrencyLimiter } from './concurrency-limiter';
import type { ModelEnv } from './model-env';
import type { SpendRecorder } from './spend-recorder';

/** The process-wide pieces every client shares. */
export interface ModelRuntime {
  env: ModelEnv;
  limiter: ConcurrencyLimiter;
  spend: SpendRecorder;
  dispatcher: Agent;
  /** Recent replies per tenant and session: a re-run or a retry never pays for a call twice. */
  replies: ReplyCache;
  /** The pool model-written programs run in (extract's code strategy); closed with the gateway. */
  sandbox: SandboxPool;
}

export interface Endpoint {
  base: string;
  model: string;
  headers: Record<string, string>;
}

/** How one provider dialect is spoken: where, what body, and how to read the answer. */
export interface ModelDialect {
  provider: Dialect;
  url(base: string): string;
  body(req: ModelRequest, model: string, variant: number): unknown;
  parse(json: unknown): ModelReply;
  /** A refusal that a different request variant would avoid (e.g. max_tokens renamed). */
  retryVariant?(status: number, errorText: string, variant: number): number | null;
}

export class ModelCallError extends Error {
  constructor(
    readonly kind: 'timeout' | 'status' | 'network' | 'bad_reply',
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ModelCallError';
  }
}

const MAX_ERROR_BODY = 2000;

/** `<base>/v1/<path>`, tolerating a base that already ends in /v1. */
export function joinV1(base: string, path: string): string {
  const b = base.replace(/\/+$/, '');
  return /\/v1$/.test(b) ? `${b}/${path}` : `${b}/v1/${path}`;
}

export class HttpModelClient implements ModelClient {
  readonly id: string;

  constructor(
    private readonly dialect: ModelDialect,
    private readonly endpoint: Endpoint,
    private readonly rt: ModelRuntime,
  ) {
    this.id = `${dialect.provider}:${endpoint.model}`;
  }

  async complete(req: ModelRequest): Promise<ModelReply> {
    const timeoutMs = req.purpose === 'summarize' ? this.rt.env.summarizeTimeoutMs : this.rt.env.extractTimeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    let release: (() => void) | undefined;
    try {
      release = await this.rt.limiter.acquire(signal);
      // The deadline may have passed while the slot was being handed over: do not send then.
      signal.throwIfAborted();
      return await this.send(req, signal, 0);
    } catch (err) {
      const e = this.classify(err, timeoutMs);
      if (e.kind === 'timeout') this.rt.spend.timeout(req.purpose);
      else this.rt.spend.error(req.purpose);
      throw e;
    } finally {
      release?.();
    }
  }

  private async send(req: ModelRequest, signal: AbortSignal, variant: number): Promise<ModelReply> {
    const model = req.model ?? this.endpoint.model;
    this.rt.spend.call(req.purpose);
    const res = await request(this.dialect.url(this.endpoint.base), {
      method: 'POST',
      headers: { ...this.endpoint.headers, 'content-type': 'application/json', 'accept-encoding': 'identity' },
      body: JSON.stringify(this.dialect.body(req, model, variant)),
      signal,
      dispatcher: this.rt.dispatcher,
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const next = this.dialect.retryVariant?.(res.statusCode, text.slice(0, MAX_ERROR_BODY), variant) ?? null;
      if (next !== null) return this.send(req, signal, next);
      throw new ModelCallError('status', `model call failed: ${res.statusCode}`, res.statusCode);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ModelCallError('bad_reply', 'model reply is not JSON');
    }
    const reply = this.dialect.parse(json);
    this.rt.spend.usage(req.purpose, reply.inputTokens, reply.outputTokens, reply.truncated);
    return reply;
  }

  private classify(err: unknown, timeoutMs: number): ModelCallError {
    if (err instanceof ModelCallError) return err;
    const name = (err as { name?: string }).name ?? '';
    const code = (err as { code?: string }).code ?? '';
    if (name === 'TimeoutError' || name === 'AbortError' || /TIMEOUT/.test(code)) {
      return new ModelCallError('timeout', `model call timed out after ${timeoutMs} ms`);
    }
    // The transport's message may name the host; only its code leaves this function.
    return new ModelCallError('network', `model call failed: ${code || 'network error'}`);
  }
}

export function newModelDispatcher(): Agent {
  return new Agent({ keepAliveTimeout: 30_000, connections: 32, headersTimeout: 0, bodyTimeout: 0 });
}
