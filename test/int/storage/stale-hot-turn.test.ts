// A hot store that answers again after a degraded period with an older copy of a session (a
// promoted replica that never got the last writes) must not win over the durable record: the
// first turn after the period reads both and the newest previous turn is the one decided from.
import { DurableStore, MemoryHotStore, StorageError, TieredHotStore, migrate, type SqlClient } from '@context-guru/storage';
import type { HotStore } from '@context-guru/components';
import { uniqueTenant } from '../../unit/storage/hot-store.contract';
import { postgresBackend } from './sql-backends';

let sql: SqlClient;
let durable: DurableStore;

beforeAll(async () => {
  sql = await postgresBackend.open();
  await migrate(sql);
  durable = new DurableStore(sql);
});
afterAll(async () => {
  await postgresBackend.dispose(sql);
});

/** A memory hot store whose every call fails while `down` is set (Redis away mid-failover). */
function failing(inner: MemoryHotStore): { hot: HotStore; toggle(v: boolean): void } {
  let down = false;
  const hot = new Proxy(inner, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (down) return Promise.reject(new StorageError('store_unavailable', 'hot store down (test)'));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { hot, toggle: (v) => (down = v) };
}

describe('TieredHotStore after a degraded period', () => {
  it('a stale hot turn record does not win over the newer durable one', async () => {
    const inner = new MemoryHotStore();
    const { hot, toggle } = failing(inner);
    const store = new TieredHotStore(hot, durable, { flushMs: 10 });
    const T = uniqueTenant();
    try {
      expect(await store.advanceTurn(T, 'conv', { n: 3, at: 1000, ttlMs: 300_000 })).toBeNull();
      expect((await store.advanceTurn(T, 'conv', { n: 5, at: 2000, ttlMs: 300_000 }))?.n).toBe(3);
      await store.recordRewrites(T, 'conv', [4]);
      await store.flush();
      // The promoted replica holds the record from before turn 2 (its last write never replicated).
      await inner.advanceTurn(T, 'conv', { n: 3, at: 1000, ttlMs: 300_000 });
      toggle(true);
      expect(await store.owns(T, 'conv', 'nothing')).toBe(false);
      toggle(false);
      await store.debt.repay();
      expect(store.debt.away).toBe(false);
      // Decided from turn 2, not from the replica's turn 1.
      expect(await store.advanceTurn(T, 'conv', { n: 7, at: 3000, ttlMs: 300_000 })).toEqual({
        n: 5,
        at: 2000,
        ttlMs: 300_000,
        rewritten: [4],
      });
      // Checked once per degraded period: the hot record, now current, answers alone again.
      expect((await store.advanceTurn(T, 'conv', { n: 9, at: 4000, ttlMs: 300_000 }))?.n).toBe(7);
    } finally {
      await store.close();
    }
  });

  it('turns served durably during the outage stay the previous turn after it', async () => {
    const inner = new MemoryHotStore();
    const { hot, toggle } = failing(inner);
    const store = new TieredHotStore(hot, durable, { flushMs: 10 });
    const T = uniqueTenant();
    try {
      await store.advanceTurn(T, 'conv', { n: 3, at: 1000, ttlMs: 300_000 });
      await store.flush();
      toggle(true);
      expect((await store.advanceTurn(T, 'conv', { n: 5, at: 2000, ttlMs: 300_000 }))?.n).toBe(3);
      toggle(false);
      expect((await store.advanceTurn(T, 'conv', { n: 7, at: 3000, ttlMs: 300_000 }))?.n).toBe(5);
    } finally {
      await store.close();
    }
  });
});
