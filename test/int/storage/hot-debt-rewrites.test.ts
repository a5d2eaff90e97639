// A turn's rewrites that reach only Postgres (the hot store failing just then) are owed to the hot
// store with their turn, like the turn itself: else the hot record keeps that turn as rewriting
// nothing, and the next turn, decided from it, puts back what the provider cached rewritten (the
// bust seen after a Sentinel promotion, where a repayment of the session finished between the
// turn and its rewrites). Real Postgres; the hot store is an in-process one that can be failed.
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

/** A memory hot store whose every call fails while it is down (Redis away, or failing over). */
function failable(inner: MemoryHotStore): { hot: HotStore; down(v: boolean): void } {
  let isDown = false;
  const hot = new Proxy(inner, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (isDown) return Promise.reject(new StorageError('store_unavailable', 'hot store down (test)'));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { hot, down: (v) => (isDown = v) };
}

const turn = (n: number, at: number) => ({ n, at, ttlMs: 300_000 });

describe('rewrites recorded in Postgres alone', () => {
  let store: TieredHotStore;
  let fail: (v: boolean) => void;
  let T: string;
  beforeEach(() => {
    const h = failable(new MemoryHotStore());
    fail = h.down;
    store = new TieredHotStore(h.hot, durable, { flushMs: 10 });
    T = uniqueTenant();
  });
  afterEach(async () => {
    await store.close();
  });

  /** The hot store answers again and is repaid; then the next turn is decided from the previous one. */
  async function nextTurnAfterRecovery(n: number, at: number) {
    fail(false);
    await store.debt.repay();
    expect(store.debt.away).toBe(false);
    return store.advanceTurn(T, 'conv', turn(n, at));
  }

  it('after the session was repaid: the turn comes back with them', async () => {
    await store.advanceTurn(T, 'conv', turn(3, 1000));
    fail(true);
    expect((await store.advanceTurn(T, 'conv', turn(5, 2000)))?.n).toBe(3);
    // The hot store answers; the session is repaid (its turn, no rewrites yet) — then fails again.
    fail(false);
    await store.debt.repay();
    fail(true);
    await store.recordRewrites(T, 'conv', [4]);
    expect(await nextTurnAfterRecovery(7, 3000)).toEqual({ ...turn(5, 2000), rewritten: [4] });
  });

  it('of a turn advanced hot: the hot record gets them', async () => {
    await store.advanceTurn(T, 'conv', turn(3, 1000));
    await store.advanceTurn(T, 'conv', turn(5, 2000));
    await store.flush();
    fail(true);
    await store.recordRewrites(T, 'conv', [2, 4]);
    // Acknowledged by Postgres (what a replica reading the durable record sees)…
    expect(await durable.loadTurn(T, 'conv')).toEqual({ ...turn(5, 2000), rewritten: [2, 4] });
    // …and owed to the hot store, which the next turn is decided from.
    expect(await nextTurnAfterRecovery(7, 3000)).toEqual({ ...turn(5, 2000), rewritten: [2, 4] });
  });

  it('of an older turn than the one owed: the owed turn stays', async () => {
    await store.advanceTurn(T, 'conv', turn(3, 1000));
    fail(true);
    await store.advanceTurn(T, 'conv', turn(5, 2000));
    await store.recordRewrites(T, 'conv', [4]);
    await store.advanceTurn(T, 'conv', turn(7, 3000));
    // A late duplicate of turn 5's rewrites (its record is now older than the owed turn 7).
    store.debt.rewrote(T, 'conv', { ...turn(5, 2000), rewritten: [4] });
    expect(await nextTurnAfterRecovery(9, 4000)).toEqual({ ...turn(7, 3000), rewritten: [] });
  });
});
