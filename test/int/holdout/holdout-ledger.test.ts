// The gateway's holdout ledgers: the SQL one (on PGlite and the real Postgres) holds deltas back and
// adds them in one statement per flush, counts what it still holds in reads, and keeps them through
// a database outage; the memory one keeps the same bounds.
import { type HoldoutSessionCost, type SqlClient } from '@context-guru/storage';
import { MemoryHoldoutLedger, SqlHoldoutLedger } from '../../../apps/gateway/src/holdout/holdout-ledger';
import { SQL_BACKENDS, openMigrated } from '../storage/sql-backends';

jest.setTimeout(60_000);

const turn = (session: string, o: Partial<HoldoutSessionCost> = {}): HoldoutSessionCost => ({
  tenant: 'acme',
  version: 1,
  session,
  arm: 'treated',
  billedUsd: 0.5,
  inputTokens: 100,
  turns: 1,
  ...o,
});

/** A client whose statements fail while `down` is set, as a database outage would. */
function flaky(inner: SqlClient): SqlClient & { down: boolean; statements: number } {
  const c = {
    down: false,
    statements: 0,
    kind: inner.kind,
    query: (text: string, params?: readonly unknown[]) => {
      c.statements++;
      return c.down ? Promise.reject(new Error('connection refused')) : inner.query(text, params);
    },
    exec: (text: string) => inner.exec(text),
    withConnection: <T>(fn: Parameters<SqlClient['withConnection']>[0]) => inner.withConnection(fn) as Promise<T>,
    transaction: <T>(fn: Parameters<SqlClient['transaction']>[0]) => inner.transaction(fn) as Promise<T>,
    close: () => inner.close(),
  };
  return c as SqlClient & { down: boolean; statements: number };
}

describe.each(SQL_BACKENDS)('SqlHoldoutLedger on %s', (_name, backend) => {
  let sql: SqlClient;
  beforeAll(async () => {
    sql = await openMigrated(backend);
  });
  afterAll(() => backend.dispose(sql));

  it('adds many turns in one statement per flush, and two ledgers (replicas) sum per session', async () => {
    const c = flaky(sql);
    const a = new SqlHoldoutLedger(c, { flushMs: 60_000 });
    const b = new SqlHoldoutLedger(sql, { flushMs: 60_000 });
    for (let i = 0; i < 10; i++) a.add(turn(`s${i % 3}`));
    b.add(turn('s0', { billedUsd: 1, inputTokens: 50 }));
    await a.flush();
    expect(c.statements).toBe(1);
    const rows = await b.list('acme', 1);
    expect(rows.map((r) => [r.session, r.turns, r.billedUsd, r.inputTokens])).toEqual([
      ['s0', 5, 3, 450],
      ['s1', 3, 1.5, 300],
      ['s2', 3, 1.5, 300],
    ]);
    await a.close();
    await b.close();
  });

  it('keeps its deltas through an outage, counts them in reads meanwhile, and writes them once it is back', async () => {
    const c = flaky(sql);
    const ledger = new SqlHoldoutLedger(c, { flushMs: 60_000 });
    c.down = true;
    ledger.add(turn('out', { tenant: 'down' }));
    await ledger.flush();
    ledger.add(turn('out', { tenant: 'down' }));
    await expect(ledger.list('down')).rejects.toThrow(/connection refused/);
    c.down = false;
    expect((await ledger.list('down')).map((r) => [r.session, r.turns])).toEqual([['out', 2]]);
    const other = new SqlHoldoutLedger(sql);
    expect((await other.list('down')).map((r) => r.turns)).toEqual([2]);
    await ledger.close();
    await other.close();
  });
});

describe('MemoryHoldoutLedger', () => {
  it('sums per session and keeps the most recently updated sessions of each version and the newest versions', async () => {
    const m = new MemoryHoldoutLedger({ sessions: 2, versions: 2 });
    m.add(turn('a'));
    m.add(turn('b'));
    m.add(turn('a'));
    m.add(turn('c'));
    expect((await m.list('acme', 1)).map((r) => [r.session, r.turns])).toEqual([
      ['a', 2],
      ['c', 1],
    ]);
    m.add(turn('x', { version: 2 }));
    m.add(turn('y', { version: 3 }));
    expect([...new Set((await m.list('acme')).map((r) => r.version))].sort()).toEqual([2, 3]);
    expect(await m.list('other')).toEqual([]);
  });
});
