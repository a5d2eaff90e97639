// First-sight look-ups asked together share one statement, against the real Postgres 15 and PGlite
// alike, and each caller gets exactly what it gets asking alone: same rows, same retention, same
// tenant isolation; a failed statement fails each of its callers with its error.
import { DurableStore, migrate, type Row, type SqlClient, type SqlQueryable } from '@context-guru/storage';
import { pgliteBackend, postgresBackend, type SqlBackend } from './sql-backends';

jest.setTimeout(60_000);

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 3, 1);
const ck = (i: number) => i.toString(16).padStart(24, '0');

/** A real client that counts the statements it runs and can be switched off. */
class CountingSql implements SqlClient {
  statements = 0;
  down = false;
  constructor(private readonly inner: SqlClient) {}
  get kind() {
    return this.inner.kind;
  }
  async query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<R[]> {
    this.statements++;
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    return this.inner.query<R>(text, params);
  }
  exec(text: string): Promise<void> {
    return this.inner.exec(text);
  }
  withConnection<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
    return this.inner.withConnection(fn);
  }
  transaction<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
    return this.inner.transaction(fn);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

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

describe.each<[string, SqlBackend]>([
  ['postgres', postgresBackend],
  ['pglite', pgliteBackend],
])('first-sight look-ups on %s', (_name, backend) => {
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
    const turns = await Promise.allSettled(SESSIONS.map(([t, s]) => store.loadTurn(t, s)));
    const cps = await Promise.allSettled(SESSIONS.map(([t, s]) => store.loadCheckpoint(t, s, [ck(1)])));
    expect(sql.statements - before).toBe(2);
    for (const r of [...turns, ...cps]) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason.message).toBe('connect ECONNREFUSED 127.0.0.1:5432');
    }
    sql.down = false;
    expect((await store.loadTurn('ta', 's1'))?.n).toBe(4);
  });
});
