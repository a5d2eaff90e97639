// A running admin API for the int tests: a fresh Postgres schema (migrated), the real Redis as the
// stash store (tiered over the durable archive) and as the generation channel, on port 0.
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createAdminServer, type AdminDeps } from '@context-guru/admin';
import {
  DurableStore,
  RedisGenerationPublisher,
  RedisHotStore,
  TieredHotStore,
  controlChannel,
  migrate,
  type SqlClient,
} from '@context-guru/storage';
import { postgresBackend } from '../int/storage/sql-backends';
import { REDIS_URL, flushPrefix, uniquePrefix } from '../int/storage/redis-support';

export const ADMIN_TOKEN = 'test-bootstrap-token-0123456789';

export interface AdminHarness {
  url: string;
  sql: SqlClient;
  store: TieredHotStore;
  prefix: string;
  /** Generations published on the control channel so far. */
  published: number[];
  call(method: string, path: string, o?: { token?: string | null; body?: unknown }): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
}

export async function startAdmin(o: Partial<AdminDeps> = {}): Promise<AdminHarness> {
  const sql = await postgresBackend.open();
  await migrate(sql);
  const prefix = uniquePrefix();
  const hot = await RedisHotStore.connect({ url: REDIS_URL, prefix });
  const store = new TieredHotStore(hot, new DurableStore(sql));
  const publisher = await RedisGenerationPublisher.connect({ url: REDIS_URL, prefix });
  const sub = new Redis(REDIS_URL);
  const published: number[] = [];
  await sub.subscribe(controlChannel(prefix));
  sub.on('message', (_ch, msg: string) => published.push(Number(msg)));
  const app = await createAdminServer({ sql, store, notifier: publisher, adminToken: ADMIN_TOKEN, ...o });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    sql,
    store,
    prefix,
    published,
    async call(method, path, c = {}) {
      const token = c.token === undefined ? ADMIN_TOKEN : c.token;
      const res = await fetch(url + path, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(c.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: c.body === undefined ? undefined : typeof c.body === 'string' ? c.body : JSON.stringify(c.body),
      });
      const text = await res.text();
      let json: unknown = text;
      try {
        json = JSON.parse(text);
      } catch {
        // keep text
      }
      return { status: res.status, json };
    },
    async close() {
      await app.close();
      await publisher.close();
      sub.disconnect();
      await store.close();
      const admin = new Redis(REDIS_URL);
      await flushPrefix(admin, prefix);
      admin.disconnect();
      await postgresBackend.dispose(sql);
    },
  };
}

/** Polls until the subscriber has seen `n` generations (pub/sub delivery is asynchronous). */
export async function waitPublished(h: AdminHarness, n: number): Promise<number[]> {
  for (let i = 0; i < 200 && h.published.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  return h.published;
}
