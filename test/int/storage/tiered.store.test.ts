// TieredHotStore over the real Redis and Postgres: a hot loss (FLUSHDB-style, or expiry the hot
// store noticed) is repaired from the archive and the checkpoint, byte-identically, and durable
// trouble never fails a request.
import {
  DurableStore,
  MemoryHotStore,
  RedisHotStore,
  StorageError,
  TieredHotStore,
  migrate,
  type SqlClient,
  type SqlQueryable,
  type Row,
} from '@context-guru/storage';
import { Redis } from 'ioredis';
import { uniqueTenant, writes } from '../../unit/storage/hot-store.contract';
import { REDIS_URL, expireValues, flushPrefix, uniquePrefix } from './redis-support';
import { postgresBackend } from './sql-backends';

jest.setTimeout(30_000);

const admin = new Redis(REDIS_URL);
const prefixes: string[] = [];
let sql: SqlClient;
let durable: DurableStore;
const stores: TieredHotStore[] = [];

beforeAll(async () => {
  sql = await postgresBackend.open();
  await migrate(sql);
  durable = new DurableStore(sql);
});
afterAll(async () => {
  for (const s of stores) await s.close();
  for (const p of prefixes) await flushPrefix(admin, p);
  await admin.quit();
  await postgresBackend.dispose(sql);
});

async function tiered(o: { flushMs?: number; durable?: DurableStore } = {}) {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  const hot = await RedisHotStore.connect({ url: REDIS_URL, prefix });
  const store = new TieredHotStore(hot, o.durable ?? durable, { flushMs: o.flushMs ?? 10 });
  stores.push(store);
  return { store, hot, prefix };
}

const ck = (i: number) => i.toString(16).padStart(24, '0');
const ORIGINAL = 'FAIL src/app.test.ts\r\n  ● renders ünïcödé 🚀\n\texpected 1, got 2\n' + 'at line\n'.repeat(400);
const REPLACEMENT = '[masked: 402 lines] <<cg:0123456789abcdef>> [full output: call context_guru_expand]\t✓';

describe('TieredHotStore', () => {
  it('after a hot loss, the previous turn (and what it rewrote) comes back from the durable copy', async () => {
    const { store, prefix } = await tiered();
    const T = uniqueTenant();
    expect(await store.advanceTurn(T, 'conv', { n: 5, at: 1000, ttlMs: 300_000 })).toBeNull();
    await store.recordRewrites(T, 'conv', [2, 4]);
    await store.flush();
    await flushPrefix(admin, prefix);
    // Without the durable copy this would read as a first turn: everything "uncached".
    expect(await store.advanceTurn(T, 'conv', { n: 7, at: 2000, ttlMs: 300_000 })).toEqual({
      n: 5,
      at: 1000,
      ttlMs: 300_000,
      rewritten: [2, 4],
    });
  });

  it('after a FLUSHDB-style loss: stash from the archive, decisions and flags from the checkpoint, byte-identical', async () => {
    const { store, hot, prefix } = await tiered();
    const T = uniqueTenant();
    await store.putStash(T, 'sess', [{ id: '0123456789abcdef', text: ORIGINAL }]);
    await store.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: REPLACEMENT, [`failed_run:${ck(2)}`]: 'fr' }, true));
    await store.markKept(T, [ck(3)]);
    await store.flush();
    expect(store.queueStats()).toMatchObject({ pendingStashes: 0, pendingCheckpoints: 0, pendingKept: 0, failures: 0 });

    await flushPrefix(admin, prefix); // the hot copy is gone without a trace
    expect(await hot.getStash(T, '0123456789abcdef')).toBeNull();

    expect(await store.getStash(T, '0123456789abcdef')).toBe(ORIGINAL);
    expect(await store.owns(T, 'sess', '0123456789abcdef')).toBe(true);
    expect(await store.owns(T, 'other', '0123456789abcdef')).toBe(false);
    const snap = await store.loadSession(T, 'sess', [ck(1), ck(2), ck(3)]);
    expect(snap.frozen.get(`mask:${ck(1)}`)).toBe(REPLACEMENT);
    expect(snap.frozen.get(`failed_run:${ck(2)}`)).toBe('fr');
    expect(snap.lost.size).toBe(0);
    expect(snap.offloaded).toBe(true);
    expect([...snap.kept]).toEqual([ck(3)]);
    // Counted as a loss and its repair: no frozen flip.
    expect(store.health()).toEqual({ frozenDropped: 2, frozenRepaired: 2, stashRefused: new Map() });

    // The hot store was re-warmed: the next turn needs no durable read.
    expect(await hot.getStash(T, '0123456789abcdef')).toBe(ORIGINAL);
    const hotSnap = await hot.loadSession(T, 'sess', [ck(1), ck(3)]);
    expect(hotSnap.frozen.get(`mask:${ck(1)}`)).toBe(REPLACEMENT);
    expect(hotSnap.offloaded).toBe(true);
    expect([...hotSnap.kept]).toEqual([ck(3)]);
  });

  it("a session's arm survives a FLUSHDB-style loss and is re-warmed hot, flushed or still queued", async () => {
    const { store, hot, prefix } = await tiered({ flushMs: 60_000 });
    const T = uniqueTenant();
    await store.commitSession(T, 'early', { frozen: new Map(), offloaded: false, arm: 'holdout' });
    await store.flush();
    await store.commitSession(T, 'late', { frozen: new Map(), offloaded: false, arm: 'holdout' });
    await flushPrefix(admin, prefix);
    expect((await hot.loadSession(T, 'early', [])).arm).toBeUndefined();
    expect([(await store.loadSession(T, 'early', [])).arm, (await store.loadSession(T, 'late', [])).arm]).toEqual(['holdout', 'holdout']);
    expect([(await hot.loadSession(T, 'early', [])).arm, (await hot.loadSession(T, 'late', [])).arm]).toEqual(['holdout', 'holdout']);
    // A later write of the other arm (a replica that recomputed it under another fraction) loses.
    await store.commitSession(T, 'early', { frozen: new Map(), offloaded: false, arm: 'treated' });
    expect((await store.loadSession(T, 'early', [])).arm).toBe('holdout');
  });

  it('a replayed original is re-put hot on every turn but archived once', async () => {
    const { store, hot, prefix } = await tiered();
    const T = uniqueTenant();
    for (let turn = 0; turn < 3; turn++) {
      await store.putStash(T, 'sess', [{ id: '0123456789abcdef', text: ORIGINAL }]);
      if (turn === 0) expect(store.queueStats().pendingStashes).toBe(1);
      else expect(store.queueStats().pendingStashes).toBe(0);
      await store.flush();
    }
    // The hot copy is still written every time, and the archive holds the original.
    await flushPrefix(admin, prefix);
    expect(await hot.getStash(T, '0123456789abcdef')).toBeNull();
    expect(await store.getStash(T, '0123456789abcdef')).toBe(ORIGINAL);
    // Another session stashing the same original archives it for its own ownership record.
    await store.putStash(T, 'other', [{ id: '0123456789abcdef', text: ORIGINAL }]);
    expect(store.queueStats().pendingStashes).toBe(1);
  });

  it('slots the hot store reports lost are restored and reported repaired, not lost', async () => {
    const { store, prefix } = await tiered();
    const T = uniqueTenant();
    await store.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: REPLACEMENT }));
    await store.flush();
    await expireValues(admin, prefix); // values expire, the frozen index survives
    const snap = await store.loadSession(T, 'sess', [ck(1)]);
    expect(snap.frozen.get(`mask:${ck(1)}`)).toBe(REPLACEMENT);
    expect(snap.lost.size).toBe(0);
    const h = store.health();
    expect(h.frozenDropped).toBe(1);
    expect(h.frozenRepaired).toBe(1);
  });

  it('writes not yet flushed still resolve after a hot loss', async () => {
    const { store, prefix } = await tiered({ flushMs: 60_000 });
    const T = uniqueTenant();
    await store.putStash(T, 'sess', [{ id: 'fedcba9876543210', text: ORIGINAL }]);
    await store.commitSession(T, 'sess', writes({ [`mask:${ck(4)}`]: REPLACEMENT }));
    await flushPrefix(admin, prefix);
    expect(await store.getStash(T, 'fedcba9876543210')).toBe(ORIGINAL);
    expect(await store.owns(T, 'sess', 'fedcba9876543210')).toBe(true);
    expect((await store.loadSession(T, 'sess', [ck(4)])).frozen.get(`mask:${ck(4)}`)).toBe(REPLACEMENT);
  });

  it('a failing database never fails a request; queued writes are retried until they land', async () => {
    const flaky = new FlakySql(sql);
    const { store } = await tiered({ durable: new DurableStore(flaky) });
    const T = uniqueTenant();
    flaky.down = true;
    await store.putStash(T, 'sess', [{ id: '1111222233334444', text: 'kept through an outage' }]);
    await store.commitSession(T, 'sess', writes({ [`mask:${ck(5)}`]: 'r5' }));
    await store.flush();
    expect(store.queueStats()).toMatchObject({ pendingStashes: 1, pendingCheckpoints: 1 });
    expect(store.queueStats().failures).toBeGreaterThan(0);

    flaky.down = false;
    await store.flush();
    expect(store.queueStats()).toMatchObject({ pendingStashes: 0, pendingCheckpoints: 0 });
    expect(await durable.getArchivedStash(T, '1111222233334444')).toBe('kept through an outage');
    expect((await durable.loadCheckpoint(T, 'sess')).frozen.get(`mask:${ck(5)}`)).toBe('r5');
  });

  it('with the database down, a burst of new sessions still gets through, each read as a first turn', async () => {
    const flaky = new FlakySql(sql);
    const { store } = await tiered({ durable: new DurableStore(flaky) });
    const T = uniqueTenant();
    flaky.down = true;
    const sessions = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    // All at once, as a burst asks them: their durable look-ups share failing statements.
    const [turns, snaps] = await Promise.all([
      Promise.all(sessions.map((s) => store.advanceTurn(T, s, { n: 2, at: 1000, ttlMs: 300_000 }))),
      Promise.all(sessions.map((s) => store.loadSession(T, s, [ck(1), ck(2)]))),
    ]);
    expect(turns.every((t) => t === null)).toBe(true);
    expect(snaps.every((s) => s.frozen.size === 0 && !s.offloaded && s.lost.size === 0)).toBe(true);
    // Each turn was recorded hot all the same: the next one is not a first turn.
    expect((await store.advanceTurn(T, 'burst-7', { n: 4, at: 2000, ttlMs: 300_000 }))?.n).toBe(2);
  });

  it('with the hot store down, writes are acknowledged by the archive and reads served from it', async () => {
    const { store, hot } = await tiered();
    const T = uniqueTenant();
    await hot.close(); // a real adapter whose connection is gone: every call rejects
    await store.putStash(T, 'sess', [{ id: '5555666677778888', text: ORIGINAL }]);
    await store.commitSession(T, 'sess', writes({ [`mask:${ck(6)}`]: REPLACEMENT }, true));
    expect(await store.getStash(T, '5555666677778888')).toBe(ORIGINAL);
    expect(await store.owns(T, 'sess', '5555666677778888')).toBe(true);
    const snap = await store.loadSession(T, 'sess', [ck(6)]);
    expect(snap.frozen.get(`mask:${ck(6)}`)).toBe(REPLACEMENT);
    expect(snap.offloaded).toBe(true);
    // The turn record too: the durable copy advances atomically, rewrites and all.
    expect(await store.advanceTurn(T, 'conv', { n: 1, at: 1, ttlMs: 1 })).toBeNull();
    await store.recordRewrites(T, 'conv', [0]);
    expect(await store.advanceTurn(T, 'conv', { n: 3, at: 2, ttlMs: 1 })).toEqual({ n: 1, at: 1, ttlMs: 1, rewritten: [0] });
    expect(await durable.loadTurn(T, 'conv')).toEqual({ n: 3, at: 2, ttlMs: 1, rewritten: [] });
  });

  it('with both stores down, a turn is kept and becomes the previous turn once they answer', async () => {
    const flaky = new FlakySql(sql);
    const { store, hot } = await tiered({ durable: new DurableStore(flaky) });
    const T = uniqueTenant();
    expect(await store.advanceTurn(T, 'conv', { n: 2, at: 1000, ttlMs: 300_000 })).toBeNull();
    await store.recordRewrites(T, 'conv', [1]);
    await hot.close();
    flaky.down = true;
    // Forwarded as the client sent it: the turn rewrote nothing, and the next one must know.
    await expect(store.advanceTurn(T, 'conv', { n: 4, at: 2000, ttlMs: 300_000 })).rejects.toThrow();
    flaky.down = false;
    expect(await store.advanceTurn(T, 'conv', { n: 6, at: 3000, ttlMs: 300_000 })).toEqual({
      n: 4,
      at: 2000,
      ttlMs: 300_000,
      rewritten: [],
    });
  });

  it('a write both stores refuse rejects with an Error: store_unavailable when the hot adapter threw a bare value', async () => {
    const flaky = new FlakySql(sql);
    flaky.down = true;
    const hot = new MemoryHotStore();
    const refuse = (): Promise<never> => Promise.reject('READONLY replica');
    Object.assign(hot, { putStash: refuse, commitSession: refuse, markKept: refuse });
    const store = new TieredHotStore(hot, new DurableStore(flaky), { flushMs: 10 });
    stores.push(store);
    const T = uniqueTenant();
    for (const write of [
      () => store.putStash(T, 'sess', [{ id: '9999aaaabbbbcccc', text: 'x' }]),
      () => store.commitSession(T, 'sess', writes({ [`mask:${ck(7)}`]: 'r7' })),
      () => store.markKept(T, [ck(7)]),
    ]) {
      const err = await write().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StorageError);
      expect(err).toMatchObject({ code: 'store_unavailable', message: 'hot store failed: READONLY replica' });
    }
  });

  it('vouches with the hot stamp only for a session whose last load the hot store answered alone', async () => {
    const hot = new MemoryHotStore();
    const store = new TieredHotStore(hot, durable, { flushMs: 10 });
    stores.push(store);
    const T = uniqueTenant();
    // Redis cannot tell: no stamp at all.
    expect((await tiered()).store.sessionStamp(T, 'sess')).toBeUndefined();
    await store.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: REPLACEMENT }));
    expect(store.sessionStamp(T, 'sess')).toBeUndefined(); // never loaded yet
    await store.loadSession(T, 'sess', [ck(1)]);
    const stamp = store.sessionStamp(T, 'sess');
    expect(stamp).toBe(hot.sessionStamp(T, 'sess'));
    expect(stamp).toBeDefined();
    // A session the hot store knows nothing of is completed from the checkpoint: no stamp for it.
    await store.loadSession(T, 'fresh', [ck(1)]);
    expect(store.sessionStamp(T, 'fresh')).toBeUndefined();
    expect(hot.sessionStamp(T, 'fresh')).toBeDefined();
  });
});

/** A real SqlClient that can be switched off, to exercise the retry path against real Postgres. */
class FlakySql implements SqlClient {
  readonly kind = 'postgres';
  down = false;
  constructor(private readonly inner: SqlClient) {}
  private check(): void {
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
  }
  async query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<R[]> {
    this.check();
    return this.inner.query<R>(text, params);
  }
  async exec(text: string): Promise<void> {
    this.check();
    return this.inner.exec(text);
  }
  async withConnection<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
    this.check();
    return this.inner.withConnection(fn);
  }
  async transaction<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
    this.check();
    return this.inner.transaction(fn);
  }
  async close(): Promise<void> {}
}
