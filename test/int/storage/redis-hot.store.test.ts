// RedisHotStore against the real Redis: the shared contract plus TTL sliding, the per-tenant cap,
// pins exempt from it, cross-replica atomicity and one round trip per call.
import { RedisHotStore } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { defineErasureContract } from '../../unit/storage/hot-store-erasure.contract';
import { defineHotStoreContract, uniqueTenant, writes, type HotStoreFactory } from '../../unit/storage/hot-store.contract';
import { REDIS_URL, expireValues, flushPrefix, uniquePrefix } from './redis-support';

const admin = new Redis(REDIS_URL, { lazyConnect: false });
const prefixes: string[] = [];
const open: RedisHotStore[] = [];

async function connect(o: { ttlSeconds?: number; maxEntries?: number; now?: () => number; prefix?: string } = {}) {
  const prefix = o.prefix ?? uniquePrefix();
  prefixes.push(prefix);
  const store = await RedisHotStore.connect({ url: REDIS_URL, ...o, prefix });
  open.push(store);
  return { store, prefix };
}

afterAll(async () => {
  for (const s of open) await s.close();
  for (const p of prefixes) await flushPrefix(admin, p);
  await admin.quit();
});

const redisFactory: HotStoreFactory = async ({ ttlSeconds, maxEntries }) => {
  const { store, prefix } = await connect({ ttlSeconds, maxEntries });
  return { store, expireAll: () => expireValues(admin, prefix) };
};
defineHotStoreContract('redis', redisFactory);
defineErasureContract('redis', redisFactory);

const ck = (i: number) => i.toString(16).padStart(24, '0');
const id = (i: number) => i.toString(16).padStart(16, '0');

describe('RedisHotStore specifics', () => {
  it('sets the TTL on write and slides it on every read', async () => {
    const { store } = await connect({ ttlSeconds: 1000 });
    const T = uniqueTenant();
    await store.putStash(T, 'sess', [{ id: id(1), text: 'x' }]);
    const key = `${store.tenantPrefix(T)}s:${id(1)}`;
    expect(await admin.pttl(key)).toBeGreaterThan(900_000);
    await admin.pexpire(key, 5000); // pretend most of the TTL has elapsed
    expect(await store.getStash(T, id(1))).toBe('x');
    expect(await admin.pttl(key)).toBeGreaterThan(900_000);
  });

  it('trims a tenant to maxEntries stashes, least recently used first; other tenants and pins untouched', async () => {
    let t = 1000;
    const { store } = await connect({ maxEntries: 3, now: () => t });
    const [A, B] = [uniqueTenant('a'), uniqueTenant('b')];
    await store.commitSession(A, 'sess', writes({ [`mask:${ck(1)}`]: 'pinned decision' }));
    await store.putStash(B, 'sess', [{ id: id(9), text: 'b' }]);
    for (const i of [1, 2, 3]) {
      t++;
      await store.putStash(A, 'sess', [{ id: id(i), text: `v${i}` }]);
    }
    t++;
    expect(await store.getStash(A, id(1))).toBe('v1'); // id(1) becomes the most recent
    t++;
    await store.putStash(A, 'sess', [{ id: id(4), text: 'v4' }]);
    expect(await store.getStash(A, id(2))).toBeNull();
    for (const i of [1, 3, 4]) expect(await store.getStash(A, id(i))).toBe(`v${i}`);
    expect(await admin.zcard(`${store.tenantPrefix(A)}lru`)).toBe(3);
    expect(await store.getStash(B, id(9))).toBe('b');
    expect((await store.loadSession(A, 'sess', [ck(1)])).frozen.get(`mask:${ck(1)}`)).toBe('pinned decision');
  });

  it('two replicas racing advanceTurn on one session: exactly one sees no previous turn', async () => {
    const { store: r1, prefix } = await connect();
    const { store: r2 } = await connect({ prefix });
    const T = uniqueTenant();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? r1 : r2).advanceTurn(T, 'race', { n: i + 1, at: 5000 + i, ttlMs: 300_000 })),
    );
    expect(results.filter((r) => r === null)).toHaveLength(1);
    expect(new Set(results.filter((r) => r).map((r) => r!.n)).size).toBe(19);
  });

  it('a replica sees decisions, lost marks and ownership written by another', async () => {
    const { store: r1, prefix } = await connect();
    const { store: r2 } = await connect({ prefix });
    const T = uniqueTenant();
    await r1.putStash(T, 'sess', [{ id: id(5), text: 'five' }]);
    await r1.commitSession(T, 'sess', writes({ [`mask:${ck(5)}`]: 'r5' }, true));
    expect(await r2.owns(T, 'sess', id(5))).toBe(true);
    const snap = await r2.loadSession(T, 'sess', [ck(5)]);
    expect(snap.frozen.get(`mask:${ck(5)}`)).toBe('r5');
    expect(snap.offloaded).toBe(true);
  });

  it('a warm turn is two round trips: the turn advance beside the session load, then every write together', async () => {
    const { store } = await connect();
    const T = uniqueTenant();
    await store.advanceTurn(T, 'conv', { n: 4, at: 1000, ttlMs: 300_000 });
    const before = store.roundTrips;
    const [prev, snap] = await Promise.all([
      store.advanceTurn(T, 'conv', { n: 6, at: 2000, ttlMs: 300_000 }),
      store.loadSession(T, 'sess', [ck(1)]),
    ]);
    expect(prev?.n).toBe(4);
    expect(snap.frozen.size).toBe(0);
    await Promise.all([
      store.putStash(T, 'sess', [{ id: id(7), text: 'original' }]),
      store.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: 'a' }, true)),
      store.recordRewrites(T, 'conv', [5]),
    ]);
    expect(store.roundTrips - before).toBe(2);
    // And the writes all landed.
    expect(await store.getStash(T, id(7))).toBe('original');
    expect((await store.loadSession(T, 'sess', [ck(1)])).frozen.get(`mask:${ck(1)}`)).toBe('a');
  });

  it('putStash of many entries with ownership, and commitSession, are one round trip each', async () => {
    const { store } = await connect();
    const T = uniqueTenant();
    const before = store.roundTrips;
    await store.putStash(
      T,
      'sess',
      Array.from({ length: 25 }, (_, i) => ({ id: id(100 + i), text: 'y'.repeat(4096) })),
    );
    expect(store.roundTrips - before).toBe(1);
    await store.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: 'a', [`mask:${ck(2)}`]: 'b' }, true));
    expect(store.roundTrips - before).toBe(2);
    await store.loadSession(T, 'sess', [ck(1), ck(2)]);
    expect(store.roundTrips - before).toBe(3);
  });

  it('keys are namespaced by an encoded tenant, so crafted tenant names cannot collide', async () => {
    const { store } = await connect();
    const base = uniqueTenant();
    await store.putStash(`${base}}:s:x`, 'sess', [{ id: id(1), text: 'crafted' }]);
    expect(await store.getStash(base, id(1))).toBeNull();
    expect(store.tenantPrefix('a}b:c')).toMatch(/\{a%7Db%3Ac\}:$/);
  });
});
