// DurableStore and the migration runner, against the real Postgres 15 and PGlite (PG 18) alike.
import { DurableStore, loadMigrations, migrate, type SqlClient } from '@context-guru/storage';
import { SQL_BACKENDS } from './sql-backends';

jest.setTimeout(60_000);

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 0, 1);
const ck = (i: number) => i.toString(16).padStart(24, '0');

describe.each(SQL_BACKENDS)('durable storage on %s', (_name, backend) => {
  let sql: SqlClient;
  let now = T0;
  let store: DurableStore;

  beforeAll(async () => {
    sql = await backend.open();
    store = new DurableStore(sql, { retentionDays: 30, now: () => now });
  });
  afterAll(async () => {
    await backend.dispose(sql);
  });
  beforeEach(() => {
    now = T0;
  });

  it('two runners starting at once apply every migration exactly once', async () => {
    const other = await backend.second(sql);
    try {
      const [a, b] = await Promise.all([migrate(sql), migrate(other)]);
      const names = loadMigrations().map((m) => `${String(m.version).padStart(4, '0')}_${m.name}`);
      // Each file is locked on its own (a transaction-level lock, so PgBouncer's transaction mode
      // keeps it): the runners may share the work, never a file.
      expect([...a.applied, ...b.applied].sort()).toEqual(names);
      expect(a.current).toBe(b.current);
    } finally {
      if (other !== sql) await other.close();
    }
    const ledger = await sql.query('SELECT version FROM schema_migrations ORDER BY version');
    expect(ledger.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
  });

  it('is idempotent: a second run applies nothing', async () => {
    const again = await migrate(sql);
    expect(again.applied).toEqual([]);
    expect(again.current).toBe(Math.max(...loadMigrations().map((m) => m.version)));
  });

  it('refuses a migration edited after it was applied, and leaves the ledger unchanged', async () => {
    const edited = loadMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'f'.repeat(64) } : m));
    await expect(migrate(sql, { migrations: edited })).rejects.toThrow(/edited after it was applied/);
    // The advisory lock was released: a normal run still goes through.
    expect((await migrate(sql)).applied).toEqual([]);
  });

  it('rolls back a failing migration with its ledger row', async () => {
    const broken = [
      ...loadMigrations(),
      { version: 9999, name: 'broken', sql: 'CREATE TABLE cg_half (x int); SELECT no_such_fn();', checksum: 'x' },
    ];
    await expect(migrate(sql, { migrations: broken })).rejects.toThrow();
    expect(
      await sql.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'cg_half' AND table_schema = current_schema()"),
    ).toEqual([]);
    expect(await sql.query('SELECT 1 FROM schema_migrations WHERE version = 9999')).toEqual([]);
  });

  it('normalises int8, bytea, timestamptz and jsonb to the same JS types', async () => {
    const [row] = await sql.query(
      `SELECT 9007199254740991::int8 AS big, count(*) AS cnt, '\\x00ff10'::bytea AS bin, now() AS at, '{"a":[1,"x"]}'::jsonb AS doc FROM (SELECT 1) s`,
    );
    expect(row!.big).toBe(9007199254740991);
    expect(row!.cnt).toBe(1);
    expect(Buffer.isBuffer(row!.bin)).toBe(true);
    expect([...(row!.bin as Buffer)]).toEqual([0, 255, 16]);
    expect(row!.at).toBeInstanceOf(Date);
    expect(row!.doc).toEqual({ a: [1, 'x'] });
  });

  it('archives stashes byte-identically, scoped by tenant, with ownership', async () => {
    const text = 'exit 1\r\n\tüñí 🚀 ' + 'x'.repeat(5000) + '\u0001';
    await store.archiveStash([
      { tenant: 'ta', session: 's1', id: 'aaaaaaaaaaaaaaaa', text },
      { tenant: 'ta', session: 's2', id: 'aaaaaaaaaaaaaaaa', text },
      { tenant: 'tb', session: 's1', id: 'bbbbbbbbbbbbbbbb', text: 'b' },
      { tenant: 'ta', session: 's1', id: 'aaaaaaaaaaaaaaaa', text },
    ]);
    expect(await store.getArchivedStash('ta', 'aaaaaaaaaaaaaaaa')).toBe(text);
    expect(await store.getArchivedStash('tb', 'aaaaaaaaaaaaaaaa')).toBeNull();
    expect(await store.getArchivedStash('ta', 'bbbbbbbbbbbbbbbb')).toBeNull();
    expect(await store.owns('ta', 's1', 'aaaaaaaaaaaaaaaa')).toBe(true);
    expect(await store.owns('ta', 's2', 'aaaaaaaaaaaaaaaa')).toBe(true);
    expect(await store.owns('ta', 's3', 'aaaaaaaaaaaaaaaa')).toBe(false);
    expect(await store.owns('tb', 's1', 'aaaaaaaaaaaaaaaa')).toBe(false);
  });

  it('archives an original another session stashed lately as ownership only; its text again after six hours', async () => {
    const id = 'eeeeeeeeeeeeeeee';
    const expiry = async () =>
      ((await sql.query('SELECT expires_at FROM stash_archive WHERE tenant = $1 AND id = $2', ['tw', id]))[0] as { expires_at: Date })
        .expires_at;
    await store.archiveStash([{ tenant: 'tw', session: 's1', id, text: 'shared original' }]);
    const first = await expiry();
    now = T0 + 3_600_000;
    await store.archiveStash([{ tenant: 'tw', session: 's2', id, text: 'shared original' }]);
    expect(await expiry()).toEqual(first); // the text row was not written again
    expect(await store.owns('tw', 's2', id)).toBe(true);
    expect(await store.getArchivedStash('tw', id)).toBe('shared original');
    now = T0 + 7 * 3_600_000;
    await store.archiveStash([{ tenant: 'tw', session: 's3', id, text: 'shared original' }]);
    expect((await expiry()).getTime()).toBe(now + 30 * DAY);
    expect(await store.owns('tw', 's3', id)).toBe(true);
  });

  it('honours retention on reads, extends it on re-archive, and purges past it', async () => {
    await store.archiveStash([{ tenant: 'tr', session: 's', id: 'cccccccccccccccc', text: 'old' }]);
    await store.archiveStash([{ tenant: 'tr', session: 's', id: 'dddddddddddddddd', text: 'renewed' }]);
    now = T0 + 20 * DAY;
    await store.archiveStash([{ tenant: 'tr', session: 's', id: 'dddddddddddddddd', text: 'renewed' }]);
    now = T0 + 31 * DAY;
    expect(await store.getArchivedStash('tr', 'cccccccccccccccc')).toBeNull();
    expect(await store.getArchivedStash('tr', 'dddddddddddddddd')).toBe('renewed');
    const purged = await store.purgeExpired();
    expect(purged?.stashes).toBeGreaterThanOrEqual(1);
    expect(await sql.query("SELECT id FROM stash_archive WHERE tenant = 'tr' ORDER BY id")).toEqual([{ id: 'dddddddddddddddd' }]);
  });

  it('checkpoints frozen decisions: last write wins, filtered by content key, isolated by tenant', async () => {
    const replacement = '[masked 412 lines] <<cg:0123456789abcdef>> [full output: call context_guru_expand]\n';
    await store.saveCheckpoint(
      'tc',
      'sess',
      new Map([
        [`mask:${ck(1)}`, 'first'],
        [`failed_run:${ck(2)}`, 'fr'],
      ]),
    );
    await store.saveCheckpoints([
      { tenant: 'tc', session: 'sess', frozen: new Map([[`mask:${ck(1)}`, replacement]]), offloaded: true },
      { tenant: 'td', session: 'sess', frozen: new Map([[`mask:${ck(1)}`, 'other tenant']]), offloaded: false },
    ]);
    const all = await store.loadCheckpoint('tc', 'sess');
    expect(Object.fromEntries(all.frozen)).toEqual({ [`mask:${ck(1)}`]: replacement, [`failed_run:${ck(2)}`]: 'fr' });
    expect(all.offloaded).toBe(true);
    const some = await store.loadCheckpoint('tc', 'sess', [ck(2), ck(9)]);
    expect(Object.fromEntries(some.frozen)).toEqual({ [`failed_run:${ck(2)}`]: 'fr' });
    const other = await store.loadCheckpoint('td', 'sess');
    expect(other.frozen.get(`mask:${ck(1)}`)).toBe('other tenant');
    expect(other.offloaded).toBe(false);
    expect((await store.loadCheckpoint('tc', 'nobody')).frozen.size).toBe(0);
    now = T0 + 31 * DAY;
    expect((await store.loadCheckpoint('tc', 'sess')).frozen.size).toBe(0);
  });

  it("keeps a session's first arm beside its offloaded flag, whatever arrives later", async () => {
    await store.saveCheckpoints([
      { tenant: 'ta', session: 's1', frozen: new Map(), offloaded: false, arm: 'holdout' },
      { tenant: 'ta', session: 's2', frozen: new Map(), offloaded: true },
    ]);
    await store.saveCheckpoints([
      { tenant: 'ta', session: 's1', frozen: new Map(), offloaded: true, arm: 'treated' },
      { tenant: 'ta', session: 's2', frozen: new Map(), offloaded: false, arm: 'treated' },
    ]);
    const [s1, s2, none] = await Promise.all([
      store.loadCheckpoint('ta', 's1'),
      store.loadCheckpoint('ta', 's2'),
      store.loadCheckpoint('tb', 's1'),
    ]);
    expect([s1.arm, s1.offloaded, s2.arm, s2.offloaded, none.arm, none.offloaded]).toEqual([
      'holdout',
      true,
      'treated',
      true,
      undefined,
      false,
    ]);
  });

  it('keeps kept-verbatim marks tenant-wide and returns them with the checkpoint', async () => {
    await store.markKept('tk', [ck(1), ck(1), ck(2)]);
    expect([...(await store.keptAmong('tk', [ck(1), ck(3)]))]).toEqual([ck(1)]);
    expect((await store.keptAmong('tz', [ck(1)])).size).toBe(0);
    const cp = await store.loadCheckpoint('tk', 'any', [ck(2), ck(3)]);
    expect([...cp.kept]).toEqual([ck(2)]);
  });

  it('keeps the last turn per conversation: a new turn resets its rewrites, a rewrite updates them', async () => {
    await store.saveTurns([{ tenant: 'tt', session: 'c1', turn: { n: 4, at: 1000, ttlMs: 3_600_000 } }]);
    expect(await store.loadTurn('tt', 'c1')).toEqual({ n: 4, at: 1000, ttlMs: 3_600_000, rewritten: [] });
    await store.saveTurns([{ tenant: 'tt', session: 'c1', rewritten: [1, 3], at: 1000 }]);
    expect((await store.loadTurn('tt', 'c1'))?.rewritten).toEqual([1, 3]);
    // Rewrites of another turn never land on this one.
    await store.saveTurns([{ tenant: 'tt', session: 'c1', rewritten: [9], at: 999 }]);
    expect((await store.loadTurn('tt', 'c1'))?.rewritten).toEqual([1, 3]);
    // A later turn asking a shorter TTL keeps the longest; its rewrites start empty.
    await store.saveTurns([{ tenant: 'tt', session: 'c1', turn: { n: 6, at: 2000, ttlMs: 300_000 } }]);
    expect(await store.loadTurn('tt', 'c1')).toEqual({ n: 6, at: 2000, ttlMs: 3_600_000, rewritten: [] });
    // Replicas flush behind independently: an older turn arriving late does not win.
    await store.saveTurns([{ tenant: 'tt', session: 'c1', turn: { n: 5, at: 1500, ttlMs: 300_000 } }]);
    expect((await store.loadTurn('tt', 'c1'))?.n).toBe(6);
    expect(await store.loadTurn('tu', 'c1')).toBeNull();
    now = T0 + 31 * DAY;
    expect(await store.loadTurn('tt', 'c1')).toBeNull();
  });
});
