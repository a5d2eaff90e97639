// Where a request names its tenant: `x-context-guru-key`, an auth slot (`Authorization: Bearer
// cg_live_…` or `x-api-key: cg_live_…`, scrubbed before forwarding by forward-headers.ts), or the
// path prefix `/t/<key>/…` for clients that can only set a base URL. The key itself is never kept
// or logged: the directory is keyed by its SHA-256, and the path form is stripped from the URL
// before anything (routing, logs, Fastify) sees it.
import { hashKey } from '@context-guru/storage';
import { TENANT_KEY_PREFIX } from './forward-headers';

/** The pseudo-header the node:http front puts the path-form key in (a client copy is removed first). */
const PATH_KEY_HEADER = 'x-context-guru-path-key';
const KEY_HEADER = 'x-context-guru-key';

type Headers = Record<string, string | string[] | undefined>;

export type KeyFinding = { kind: 'none' } | { kind: 'key'; hash: string } | { kind: 'conflict' };

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The tenant key a request carries, hashed; two different keys in two slots are a conflict. */
export function findTenantKey(headers: Headers): KeyFinding {
  const found = new Set<string>();
  const add = (v: string | undefined) => {
    const k = v?.trim();
    if (k) found.add(k);
  };
  add(first(headers[PATH_KEY_HEADER]));
  add(first(headers[KEY_HEADER]));
  const auth = first(headers.authorization)?.replace(/^Bearer\s+/i, '');
  if (auth?.startsWith(TENANT_KEY_PREFIX)) add(auth);
  const apiKey = first(headers['x-api-key']);
  if (apiKey?.startsWith(TENANT_KEY_PREFIX)) add(apiKey);
  const [key, ...others] = found;
  if (key === undefined) return { kind: 'none' };
  if (others.length > 0) return { kind: 'conflict' };
  return { kind: 'key', hash: hashKey(key) };
}

const PATH_FORM = /^\/t\/([^/?#]+)(\/[^?#]*)?/;

/**
 * Strips `/t/<key>` from a request URL: the rest of the URL, and the (percent-decoded) key; null
 * when the URL has no path-form key.
 * @internal exported for tests
 */
export function splitTenantPath(url: string): { url: string; key: string } | null {
  if (!url.startsWith('/t/')) return null;
  const [whole, raw, tail] = PATH_FORM.exec(url) ?? [];
  if (whole === undefined || raw === undefined) return null;
  let key: string;
  try {
    key = decodeURIComponent(raw);
  } catch {
    key = raw;
  }
  const rest = url.slice(whole.length - (tail?.length ?? 0));
  return { url: rest.startsWith('/') ? rest : `/${rest}`, key };
}

/** Moves a path-form key into the pseudo-header and rewrites the URL (in place, before routing). */
export function applyTenantPath(req: { url?: string; headers: Headers }): void {
  delete req.headers[PATH_KEY_HEADER];
  const split = splitTenantPath(req.url ?? '/');
  if (!split) return;
  req.url = split.url;
  req.headers[PATH_KEY_HEADER] = split.key;
}
