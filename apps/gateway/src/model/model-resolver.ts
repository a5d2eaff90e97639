// Which models a request may spend on. `incoming` is the proxied request's own model on the
// route's upstream with the caller's own credential — exactly the auth headers the forward sends,
// tenant keys and x-context-guru-* headers excluded. `config` is the operator's cheap model.
import type { IncomingHttpHeaders } from 'node:http';
import { ReplyMemo, SandboxPool, type Dialect, type ModelClient, type ModelSources } from '@context-guru/components';
import { upstreamRequestHeaders } from '../http/forward-headers';
import { ANTHROPIC_VERSION, anthropicModel } from './anthropic.model';
import { ConcurrencyLimiter } from './concurrency-limiter';
import { newModelDispatcher, type Endpoint, type ModelRuntime } from './http-model';
import type { CheapModel, ModelEnv } from './model-env';
import { openaiModel } from './openai.model';
import { SpendRecorder } from './spend-recorder';

/** Credential and API-version headers a model call may carry; nothing else is reused. */
const AUTH_HEADERS = ['authorization', 'x-api-key', 'api-key', 'anthropic-version', 'openai-organization', 'openai-project'];

export interface IncomingRequest {
  dialect: Dialect;
  /** The body's `model` value (unknown until checked). */
  model: unknown;
  /** The route's upstream base URL, e.g. https://api.anthropic.com. */
  upstreamBase: string;
  headers: IncomingHttpHeaders;
}

export function createModelRuntime(env: ModelEnv): ModelRuntime {
  return {
    env,
    limiter: new ConcurrencyLimiter(env.concurrent),
    spend: new SpendRecorder(),
    dispatcher: newModelDispatcher(),
    replies: new ReplyMemo(),
    sandbox: new SandboxPool(),
  };
}

/**
 * The forward's auth headers, reduced to credentials; OAuth callers keep their oauth beta flag.
 * @internal exported for tests
 */
export function incomingAuthHeaders(dialect: Dialect, inbound: IncomingHttpHeaders): Record<string, string> {
  const forwarded = upstreamRequestHeaders(inbound);
  const out: Record<string, string> = {};
  for (const h of AUTH_HEADERS) if (forwarded[h] !== undefined) out[h] = forwarded[h];
  const oauth = (forwarded['anthropic-beta'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('oauth-'));
  if (dialect === 'anthropic') {
    if (oauth.length) out['anthropic-beta'] = oauth.join(',');
    out['anthropic-version'] ??= ANTHROPIC_VERSION;
  }
  return out;
}

function client(provider: Dialect, endpoint: Endpoint, rt: ModelRuntime): ModelClient {
  return provider === 'anthropic' ? anthropicModel(endpoint, rt) : openaiModel(endpoint, rt);
}

function cheapHeaders(c: CheapModel): Record<string, string> {
  const h: Record<string, string> = {};
  if (c.key) {
    if (c.auth === 'bearer') h.authorization = `Bearer ${c.key}`;
    else h['x-api-key'] = c.key;
  }
  if (c.provider === 'anthropic') h['anthropic-version'] = ANTHROPIC_VERSION;
  return h;
}

export function createModelSources(env: ModelEnv, request: IncomingRequest, rt: ModelRuntime): ModelSources {
  const sources: ModelSources = { replies: rt.replies, sandbox: rt.sandbox };
  // No compaction client speaks Gemini: its requests use the configured model only.
  if (request.dialect !== 'gemini' && typeof request.model === 'string' && request.model.trim()) {
    const headers = incomingAuthHeaders(request.dialect, request.headers);
    sources.incoming = client(request.dialect, { base: request.upstreamBase, model: request.model, headers }, rt);
  }
  if (env.cheap) {
    sources.config = client(env.cheap.provider, { base: env.cheap.base, model: env.cheap.model, headers: cheapHeaders(env.cheap) }, rt);
  }
  return sources;
}
