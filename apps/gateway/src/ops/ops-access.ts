// Who may read the operator's views: /metrics (every tenant's label, billing) and /readyz's detail
// (tenant ids, versions, pipelines). With OPS_TOKEN set, only a caller presenting it as
// `Authorization: Bearer <token>`; without it, anyone — but only while the gateway listens on
// loopback alone (the laptop default), since then no one else can reach the port.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Env } from '../env';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export function opsAllowed(env: Pick<Env, 'opsToken' | 'host'>, headers: IncomingHttpHeaders): boolean {
  if (env.opsToken === undefined) return LOOPBACK.has(env.host);
  const auth = headers.authorization;
  const presented = typeof auth === 'string' && /^bearer /i.test(auth) ? auth.slice(7).trim() : '';
  // Compared as digests so the comparison takes the same time whatever the length.
  return timingSafeEqual(digest(presented), digest(env.opsToken));
}
