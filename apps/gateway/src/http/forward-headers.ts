// Header policy for every forward: hop-by-hop headers, our own x-context-guru-* headers and
// Cookie never reach the provider; the caller's provider credential passes through unchanged.
import type { IncomingHttpHeaders } from 'node:http';
import { SESSION_HEADER } from '@context-guru/engine';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'host',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-connection',
  'cookie',
  'accept-encoding',
]);

export const TENANT_KEY_PREFIX = 'cg_live_';

export function upstreamRequestHeaders(inbound: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  // for…in, not Object.entries: no array of pairs per request (header objects are plain data).
  for (const name in inbound) {
    const value = inbound[name];
    const key = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(key) || key.startsWith('x-context-guru-')) continue;
    const v = Array.isArray(value) ? value.join(', ') : value;
    // A tenant key carried in an auth slot identifies the tenant; it must never reach a provider.
    if ((key === 'authorization' || key === 'x-api-key') && v.replace(/^Bearer\s+/i, '').startsWith(TENANT_KEY_PREFIX)) continue;
    out[key] = v;
  }
  // The gateway reads responses (usage, expand calls), so it asks for them uncompressed.
  out['accept-encoding'] = 'identity';
  out['content-type'] = 'application/json';
  return out;
}

const RESPONSE_DROP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'trailer', 'upgrade', 'set-cookie']);

/** `keepLength`: the body goes out as the upstream's bytes, so its content-length stays true. */
export function clientResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
  keepLength = false,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (RESPONSE_DROP.has(lower) && !(keepLength && lower === 'content-length')) continue;
    out[name] = value;
  }
  return out;
}

/**
 * One header's value, for inbound (Node) and upstream (undici) headers alike. Names match
 * case-insensitively (`name` is given in lower case); a repeated header reads as its values joined
 * with ", " — the HTTP combination rule, which is also how Node presents most repeated inbound
 * headers and how upstreamRequestHeaders forwards them.
 */
export function headerValue(h: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined {
  const direct = h[name];
  if (direct !== undefined) return Array.isArray(direct) ? direct.join(', ') : direct;
  for (const [k, v] of Object.entries(h)) {
    if (v !== undefined && k.toLowerCase() === name) return Array.isArray(v) ? v.join(', ') : v;
  }
  return undefined;
}

function firstValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The client's own x-context-guru-* hints: an explicit session id and the per-request bypass. */
export function clientHints(h: IncomingHttpHeaders): {
  sessionHeader: string | undefined;
  conversationHeader: string | undefined;
  bypassHeader: boolean;
} {
  return {
    sessionHeader: headerValue(h, SESSION_HEADER),
    // Codex names its session in these (0.169 sends `session-id`; read by the Responses route only,
    // after prompt_cache_key). Node lower-cases inbound names, so a direct lookup is exact.
    conversationHeader: firstValue(h['session_id']) ?? firstValue(h['session-id']) ?? firstValue(h['conversation_id']),
    bypassHeader: (headerValue(h, 'x-context-guru-bypass') ?? '').toLowerCase() === 'true',
  };
}

/** The media type of a Content-Type value, lower-cased, without its parameters (`; charset=…`). */
export function mediaType(contentType: string): string {
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}
