// A command's deadline measures Redis, not the gateway's own event loop. A reply that arrived
// while the process was busy past the deadline (a long synchronous stretch, a starved CPU) is
// read and used — before, ioredis's timer fired first and the request failed open, forwarding its
// pristine body. A Redis that really does not answer still rejects as store_unavailable.
import { Redis } from 'ioredis';
import { RedisHotStore, StorageError } from '@context-guru/storage';
import { startPrivateRedis } from '../../support/replicas';
import { REDIS_URL, flushPrefix, uniquePrefix } from './redis-support';

jest.setTimeout(30_000);

const DEADLINE_MS = 200;

/** Keeps the thread busy, as a large pipeline run or a descheduled process does. */
function blockLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

describe('RedisHotStore deadline and a busy event loop', () => {
  const prefix = uniquePrefix();
  let store: RedisHotStore;
  let admin: Redis;

  beforeAll(async () => {
    store = await RedisHotStore.connect({ url: REDIS_URL, prefix, commandTimeoutMs: DEADLINE_MS });
    admin = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await flushPrefix(admin, prefix);
    await store.close();
    admin.disconnect();
  });

  it('uses replies that arrived while the loop was blocked past the deadline', async () => {
    await store.putStash('t', 'sess', [{ id: '00000000000000aa', text: 'original output' }]);
    // Every command is on the wire (one burst) before the loop blocks; the replies come back
    // during the block, long before the loop can read them.
    const calls = [store.getStash('t', '00000000000000aa'), store.owns('t', 'sess', '00000000000000aa'), store.ping()];
    blockLoop(DEADLINE_MS * 4);
    await expect(Promise.all(calls)).resolves.toEqual(['original output', true, undefined]);
    // A pipelined turn load too.
    const load = store.loadSession('t', 'sess', ['c'.repeat(24)]);
    blockLoop(DEADLINE_MS * 4);
    await expect(load).resolves.toMatchObject({ offloaded: false });
  });
});

describe('RedisHotStore deadline when Redis does not answer', () => {
  let redis: { url: string; stop(): Promise<void> };
  let store: RedisHotStore;
  let admin: Redis;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    store = await RedisHotStore.connect({ url: redis.url, commandTimeoutMs: DEADLINE_MS });
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    await admin.client('UNPAUSE');
    await store.close();
    admin.disconnect();
    await redis.stop();
  });

  it('rejects as store_unavailable, naming the deadline, and serves again once Redis answers', async () => {
    await store.ping();
    // CLIENT PAUSE holds every other client's commands: the store's command waits unanswered.
    await admin.client('PAUSE', 3000, 'ALL');
    const err: unknown = await store.getStash('t', '00000000000000bb').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe('store_unavailable');
    expect((err as StorageError).message).toMatch(new RegExp(`no reply within ${DEADLINE_MS} ms`));
    await admin.client('UNPAUSE');
    await expect(store.getStash('t', '00000000000000bb')).resolves.toBeNull();
  });
});
