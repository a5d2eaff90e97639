// Redis test helpers: a unique key prefix per run, TTL elapse by deleting value keys, cleanup.
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

let n = 0;
export function uniquePrefix(): string {
  return `cgtest:${process.pid}:${Date.now().toString(36)}:${n++}:`;
}

export async function scanKeys(admin: Redis, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out;
}

/** What TTL expiry of every value does: values go, the longer-lived frozen index and lost marks stay. */
export async function expireValues(admin: Redis, prefix: string): Promise<void> {
  const keys = (await scanKeys(admin, prefix)).filter((k) => !/:(fidx|flost):/.test(k));
  if (keys.length > 0) await admin.del(...keys);
}

/** FLUSHDB-style loss of everything under a prefix (other runs sharing the server are untouched). */
export async function flushPrefix(admin: Redis, prefix: string): Promise<void> {
  const keys = await scanKeys(admin, prefix);
  if (keys.length > 0) await admin.del(...keys);
}
