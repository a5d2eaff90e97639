// First-sight look-ups asked together share one statement, against the real Postgres 15 and PGlite
// alike, and each caller gets exactly what it gets asking alone: same rows, same retention, same
// tenant isolation; a failed statement fails each of its callers with its error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DurableStore, PgliteSqlClient, migrate, type SqlClient } from '@context-guru/storage';
import { CountingSql } from './counting-sql';
import { SQL_BACKENDS, postgresBackend } from './sql-backends';

jest.setTimeout(60_000);

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 3, 1);
const ck = (i: number) => i.toString(16).padStart(24, '0');

/** Rows of every kind, for two tenants, some past retention by the time the look-ups run. */
async function seed(store: DurableStore, at: (ms: number) => void): Promise<void> {
  at(T0 - 40 * DAY);
  await store.saveTurns([{ tenant: 'ta', session: 'expired', turn: { n: 3, at: 1, ttlMs: 300_000 } }]);
  await store.saveCheckpoint('ta', 'expired', new Map([[`mask:${ck(1)}`, 'old']]), true, 'holdout');
  await store.markKept('ta', [ck(9)]);
  at(T0);
  await store.saveTurns([
    { tenant: 'ta', session: 's1', turn: { n: 4, at: 1000, ttlMs: 3_600_000 } },
    { tenant: 'ta', session: 's2', turn: { n: 9, at: 2000, ttlMs: 300_000 } },
    { tenant: 'tb', session: 's1', turn: { n: 2, at: 3000, ttlMs: 300_000 } },
  ]);
  await store.saveTurns([{ tenant: 'ta', session: 's2', rewritten: [1, 5], at: 2000 }]);
  await store.saveCheckpoints([
    {
      tenant: 'ta',
      session: 's1',
      frozen: new Map([
        [`mask:${ck(1)}`, 'r1 ünïcödé 🚀'],
        [`failed_run:${ck(2)}`, 'r2'],
        [`dedup:${ck(3)}`, 'r3'],
      ]),
      offloaded: true,
      arm: 'treated',
    },
    { tenant: 'ta', session: 's2', frozen: new Map(), offloaded: false, arm: 'holdout' },
    { tenant: 'tb', session: 's1', frozen: new Map([[`mask:${ck(1)}`, 'other tenant']]), offloaded: true },
  ]);
  await store.markKept('ta', [ck(2), ck(4)]);
  await store.markKept('tb', [ck(5)]);
}

const SESSIONS: Array<[string, string]> = [
  ['ta', 's1'],
  ['ta', 's2'],
  ['tb', 's1'],
  ['ta', 'expired'],
  ['ta', 'nobody'],
  ['tc', 's1'],
  ['ta', 's1'],
  ['ta', 'bad\u0000session'],
];
const KEY_LISTS: Array<readonly string[] | undefined> = [undefined, [], [ck(1), ck(2), ck(4), ck(9)], [ck(3), ck(5), ck(3), '\uD800lone']];
const CHECKPOINT_ASKS = SESSIONS.flatMap(([t, s]) => KEY_LISTS.map((keys) => [t, s, keys] as const));
const plain = (cp: Awaited<ReturnType<DurableStore['loadCheckpoint']>>) => ({
  frozen: Object.fromEntries(cp.frozen),
  offloaded: cp.offloaded,
  arm: cp.arm,
  kept: [...cp.kept].sort(),
});

describe.each(SQL_BACKENDS)('first-sight look-ups on %s', (_name, backend) => {
  let raw: SqlClient;
  let sql: CountingSql;
  let store: DurableStore;
  let now = T0;

  beforeAll(async () => {
    raw = await backend.open();
    await migrate(raw);
    sql = new CountingSql(raw);
    store = new DurableStore(sql, { retentionDays: 30, now: () => now });
    await seed(store, (ms) => (now = ms));
    now = T0 + DAY;
  });
  afterAll(async () => {
    await backend.dispose(raw);
  });
  beforeEach(() => {
    sql.down = false;
  });

  it('turn look-ups asked together are one statement and answer what each answers alone', async () => {
    const alone = [];
    for (const [t, s] of SESSIONS) alone.push(await store.loadTurn(t, s));
    const before = sql.statements;
    const together = await Promise.all(SESSIONS.map(([t, s]) => store.loadTurn(t, s)));
    expect(sql.statements - before).toBe(1);
    expect(together).toEqual(alone);
    expect(together.slice(0, 6)).toEqual([
      { n: 4, at: 1000, ttlMs: 3_600_000, rewritten: [] },
      { n: 9, at: 2000, ttlMs: 300_000, rewritten: [1, 5] },
      { n: 2, at: 3000, ttlMs: 300_000, rewritten: [] },
      null,
      null,
      null,
    ]);
  });

  it('checkpoint look-ups asked together are one statement and answer what each answers alone', async () => {
    const alone = [];
    for (const [t, s, keys] of CHECKPOINT_ASKS) alone.push(plain(await store.loadCheckpoint(t, s, keys)));
    const before = sql.statements;
    const together = await Promise.all(CHECKPOINT_ASKS.map(([t, s, keys]) => store.loadCheckpoint(t, s, keys)));
    expect(sql.statements - before).toBe(1);
    expect(together.map(plain)).toEqual(alone);
    const s1 = alone.slice(0, 4);
    expect(s1[0]).toEqual({
      frozen: { [`mask:${ck(1)}`]: 'r1 ünïcödé 🚀', [`failed_run:${ck(2)}`]: 'r2', [`dedup:${ck(3)}`]: 'r3' },
      offloaded: true,
      arm: 'treated',
      kept: [],
    });
    expect(s1[1]).toEqual({ frozen: {}, offloaded: true, arm: 'treated', kept: [] });
    expect(s1[2]).toEqual({
      frozen: { [`mask:${ck(1)}`]: 'r1 ünïcödé 🚀', [`failed_run:${ck(2)}`]: 'r2' },
      offloaded: true,
      arm: 'treated',
      kept: [ck(2), ck(4)],
    });
    expect(s1[3]).toEqual({ frozen: { [`dedup:${ck(3)}`]: 'r3' }, offloaded: true, arm: 'treated', kept: [] });
    // Tenant tb: its own slot and kept mark, never ta's; past retention and unknown: nothing.
    expect(alone[8 + 3]).toEqual({ frozen: {}, offloaded: true, arm: undefined, kept: [ck(5)] });
    expect(alone[12 + 2]).toEqual({ frozen: {}, offloaded: false, arm: undefined, kept: [ck(2), ck(4)] });
    expect(alone[16 + 2]).toEqual({ frozen: {}, offloaded: false, arm: undefined, kept: [ck(2), ck(4)] });
    expect(alone[20]).toEqual({ frozen: {}, offloaded: false, arm: undefined, kept: [] });
  });

  it('a failed statement fails each look-up in it with its error, as each would have failed alone', async () => {
    sql.down = true;
    const before = sql.statements;
    // Sessions the store holds (PGlite answers one it provably lacks without a statement).
    const held = SESSIONS.slice(0, 3);
    const turns = await Promise.allSettled(held.map(([t, s]) => store.loadTurn(t, s)));
    const cps = await Promise.allSettled(held.map(([t, s]) => store.loadCheckpoint(t, s, [ck(1)])));
    expect(sql.statements - before).toBe(2);
    for (const r of [...turns, ...cps]) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason.message).toBe('connect ECONNREFUSED 127.0.0.1:5432');
    }
    sql.down = false;
    expect((await store.loadTurn('ta', 's1'))?.n).toBe(4);
  });
});

/** Asks an unknown session until the boot scan is through (then it costs no statement). */
async function scanned(store: DurableStore, sql: CountingSql): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const before = sql.statements;
    await store.loadTurn('scan', 'probe');
    if (sql.statements === before) return;
  }
  throw new Error('the boot scan never finished');
}

describe('an exclusive store (PGlite, one process per data directory)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cg-presence-'));
  let raw: SqlClient;
  let sql: CountingSql;
  let store: DurableStore;

  beforeAll(async () => {
    // What an earlier process left in the data directory.
    const earlier = await PgliteSqlClient.open({ dataDir: dir });
    await migrate(earlier);
    const past = new DurableStore(earlier);
    await past.saveTurns([{ tenant: 'ta', session: 'earlier', turn: { n: 6, at: Date.now(), ttlMs: 300_000 } }]);
    await past.saveCheckpoint('ta', 'earlier-cp', new Map([[`mask:${ck(1)}`, 'r1']]), false, 'holdout');
    await past.markKept('ta', [ck(7)]);
    // More sessions than one page of the boot scan holds.
    await past.saveTurns(Array.from({ length: 4500 }, (_, i) => ({ tenant: 'tp', session: `s${i}`, turn: { n: i, at: 1, ttlMs: 1 } })));
    await earlier.close();
    raw = await PgliteSqlClient.open({ dataDir: dir });
    sql = new CountingSql(raw);
    store = new DurableStore(sql);
  });
  afterAll(async () => {
    await raw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks the database until its boot scan is through, then only for sessions it may hold', async () => {
    const before = sql.statements;
    expect(await store.loadTurn('ta', 'never')).toBeNull();
    expect(sql.statements - before).toBeGreaterThan(0);
    await scanned(store, sql);

    // Stored before this process began: found through the scan, on every page of it.
    expect((await store.loadTurn('ta', 'earlier'))?.n).toBe(6);
    const paged = await Promise.all([0, 1999, 2000, 3999, 4000, 4499].map((i) => store.loadTurn('tp', `s${i}`)));
    expect(paged.map((t) => t?.n)).toEqual([0, 1999, 2000, 3999, 4000, 4499]);
    const cp = await store.loadCheckpoint('ta', 'earlier-cp', [ck(1)]);
    expect([cp.frozen.get(`mask:${ck(1)}`), cp.arm]).toEqual(['r1', 'holdout']);

    // Never stored: answered without a statement, for this tenant and any other.
    const quiet = sql.statements;
    expect(await store.loadTurn('ta', 'new-1')).toBeNull();
    expect(await store.loadTurn('tb', 'earlier')).toBeNull();
    expect(plain(await store.loadCheckpoint('ta', 'new-1', [ck(1), ck(2)]))).toEqual({
      frozen: {},
      offloaded: false,
      arm: undefined,
      kept: [],
    });
    expect(plain(await store.loadCheckpoint('ta', 'new-1'))).toEqual({ frozen: {}, offloaded: false, arm: undefined, kept: [] });
    expect(sql.statements).toBe(quiet);

    // A new session whose content carries a kept mark still reads it (kept marks are tenant-wide).
    expect([...(await store.loadCheckpoint('ta', 'new-2', [ck(7), ck(8)])).kept]).toEqual([ck(7)]);
    expect(sql.statements).toBe(quiet + 1);
  });

  it('finds what it wrote after boot, through this store or any other over the same client', async () => {
    await scanned(store, sql);
    const other = new DurableStore(sql);
    await other.saveTurns([{ tenant: 'tb', session: 'later', turn: { n: 2, at: Date.now(), ttlMs: 300_000 } }]);
    await other.saveCheckpoint('tb', 'later-cp', new Map(), true);
    await other.markKept('tb', [ck(9)]);
    expect((await store.loadTurn('tb', 'later'))?.n).toBe(2);
    expect((await store.loadCheckpoint('tb', 'later-cp')).offloaded).toBe(true);
    expect([...(await store.loadCheckpoint('tb', 'new-3', [ck(9)])).kept]).toEqual([ck(9)]);
  });
});

describe('a shared store (Postgres, written by every replica)', () => {
  it('asks the database for every session it has not seen: another replica may have written it', async () => {
    const raw = await postgresBackend.open();
    const replicaB = await postgresBackend.second(raw);
    try {
      await migrate(raw);
      const sql = new CountingSql(raw);
      const a = new DurableStore(sql);
      expect(await a.loadTurn('ta', 'moved')).toBeNull();
      await new DurableStore(replicaB).saveTurns([{ tenant: 'ta', session: 'moved', turn: { n: 3, at: 5, ttlMs: 300_000 } }]);
      const before = sql.statements;
      expect((await a.loadTurn('ta', 'moved'))?.n).toBe(3);
      expect(await a.loadTurn('ta', 'never')).toBeNull();
      expect(sql.statements - before).toBe(2);
    } finally {
      await replicaB.close();
      await postgresBackend.dispose(raw);
    }
  });
});
