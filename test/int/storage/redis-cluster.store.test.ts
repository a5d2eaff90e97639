// RedisHotStore on a real Redis Cluster (three primaries, three replicas, started here): the shared
// hot-store and erasure contracts pass unchanged, every key of one tenant hashes to one slot (so
// no script, pipeline or multi-key UNLINK can meet CROSSSLOT), and the scans that span nodes
// (tenant erasure, data-key scopes) see every primary, not the one a keyless command lands on.
import { RedisHotStore, redisEndpointFrom, type RedisEndpoint } from '@context-guru/storage';
import type { Redis } from 'ioredis';
import { defineErasureContract } from '../../unit/storage/hot-store-erasure.contract';
import { defineHotStoreContract, uniqueTenant, writes, type HotStoreFactory } from '../../unit/storage/hot-store.contract';
import { startRedisCluster, type RedisClusterSetup } from '../../support/redis-topologies';
import { scanKeys, uniquePrefix } from './redis-support';

jest.setTimeout(120_000);

let cluster: RedisClusterSetup;
let primaries: Redis[];
let endpoint: RedisEndpoint;
const open: RedisHotStore[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster(3, 1);
  primaries = await cluster.primaries();
  const parsed = redisEndpointFrom({ clusterNodes: cluster.nodes });
  if (!parsed.endpoint) throw new Error(`cluster nodes not accepted: ${JSON.stringify(parsed.problem)}`);
  endpoint = parsed.endpoint;
});

afterAll(async () => {
  for (const s of open) await s.close();
  for (const p of primaries ?? []) p.disconnect();
  await cluster?.stop();
});

async function connect(o: { ttlSeconds?: number; maxEntries?: number } = {}): Promise<{ store: RedisHotStore; prefix: string }> {
  const prefix = uniquePrefix();
  const store = await RedisHotStore.connect({ url: endpoint, prefix, ...o });
  open.push(store);
  return { store, prefix };
}

/** Every key under `prefix`, whichever primary holds it. */
async function keysEverywhere(prefix: string): Promise<string[]> {
  return (await Promise.all(primaries.map((p) => scanKeys(p, prefix)))).flat();
}

const clusterFactory: HotStoreFactory = async ({ ttlSeconds, maxEntries }) => {
  const { store, prefix } = await connect({ ttlSeconds, maxEntries });
  return {
    store,
    // As TTL expiry would: the values go, the longer-lived frozen index and lost marks stay. One
    // DEL per key, sent to the primary that holds it (keys of different tenants differ in slot).
    expireAll: async () => {
      for (const p of primaries) {
        const keys = (await scanKeys(p, prefix)).filter((k) => !/:(fidx|flost):/.test(k));
        for (const k of keys) await p.del(k);
      }
    },
  };
};
defineHotStoreContract('redis cluster', clusterFactory);
defineErasureContract('redis cluster', clusterFactory);

const ck = (i: number) => i.toString(16).padStart(24, '0');
const id = (i: number) => i.toString(16).padStart(16, '0');

describe('RedisHotStore on a Redis Cluster', () => {
  it('keeps every key of a tenant in one slot, and tenants spread over the primaries', async () => {
    const { store, prefix } = await connect({ maxEntries: 2 });
    const tenants = Array.from({ length: 12 }, (_, i) => uniqueTenant(`slot${i}`));
    for (const T of tenants) {
      // Every write path: the turn script (with a trim past maxEntries), pipelines, the load script.
      await store.putStash(
        T,
        'sess',
        [1, 2, 3].map((i) => ({ id: id(i), text: `v${i}` })),
      );
      await store.commitSession(T, 'sess', { ...writes({ [`mask:${ck(1)}`]: 'frozen' }, true), arm: 'treated' });
      await store.markKept(T, [ck(2), ck(3)]);
      await store.warmStash(T, [{ id: id(7), text: 'warm' }]);
      await store.recordRewrites(T, 'sess', [1, 4]);
      await store.advanceTurn(T, 'sess#a', { n: 2, at: 1, ttlMs: 1000 });
      expect((await store.loadSession(T, 'sess', [ck(1), ck(2)])).frozen.get(`mask:${ck(1)}`)).toBe('frozen');
      expect(await store.getStash(T, id(7))).toBe('warm');
    }
    const keys = await keysEverywhere(prefix);
    const slotsOf = new Map<string, Set<number>>();
    for (const k of keys) {
      const tag = /\{([^}]*)\}/.exec(k)?.[1] ?? k;
      const slot = Number(await primaries[0]!.call('CLUSTER', 'KEYSLOT', k));
      slotsOf.set(tag, (slotsOf.get(tag) ?? new Set()).add(slot));
    }
    expect(slotsOf.size).toBe(tenants.length);
    for (const [tag, slots] of slotsOf) expect([tag, slots.size]).toEqual([tag, 1]);
    // Twelve tenants over three primaries: more than one primary holds keys (the test would
    // prove nothing about slots if the tags happened to hash alike).
    const holders = await Promise.all(primaries.map(async (p) => (await scanKeys(p, prefix)).length > 0));
    expect(holders.filter(Boolean).length).toBeGreaterThan(1);
  });

  it('erases a tenant and lists data-key scopes across every primary', async () => {
    const { store, prefix } = await connect();
    const tenants = Array.from({ length: 9 }, (_, i) => uniqueTenant(`erase${i}`));
    for (const T of tenants) await store.putStash(T, 'sess', [{ id: id(1), text: 'x' }]);
    const dataKeys = store.dataKeyStore();
    for (const T of tenants) await dataKeys.add(`tenant:${T}`, { version: 1, keyId: 'k', wrapped: Buffer.from('w') });
    expect((await dataKeys.scopes()).sort()).toEqual(tenants.map((T) => `tenant:${T}`).sort());

    for (const T of tenants) await store.eraseTenant(T);
    const left = (await keysEverywhere(prefix)).filter((k) => !k.startsWith(`${prefix}datakeys:`));
    expect(left).toEqual([]);
  });
});
