// Header policy for every forward: hop-by-hop headers, our own x-context-guru-* headers and
// Cookie never reach the provider; the caller's provider credential passes through unchanged.
import type { IncomingHttpHeaders } from 'node:http';

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
  for (const [name, value] of Object.entries(inbound)) {
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

export function clientResponseHeaders(upstream: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || RESPONSE_DROP.has(name.toLowerCase())) continue;
    out[name] = value;
  }
  return out;
}

export function headerValue(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}
