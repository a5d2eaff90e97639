// Day partitions of stash_archive, session_checkpoint and session_turn (migration 0013), on the real
// Postgres 15 and PGlite alike: a retention round creates the partitions ahead and drops whole
// partitions past retention; rows written while their day had no partition land in the DEFAULT
// one and move to their day's on the next round; a key written on two days has a row in each
// partition and every reader answers with the newest (the last write), as one row did before.
import { DurableStore, type SqlClient } from '@context-guru/storage';
import { openMigrated, SQL_BACKENDS } from './sql-backends';

jest.setTimeout(60_000);

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 10, 12); // noon UTC, 2026-03-10
const ck = (i: number) => i.toString(16).padStart(24, '0');

/** Day partitions of a table (the DEFAULT one apart), sorted. */
async function partitions(sql: SqlClient, table: string): Promise<string[]> {
  const rows = await sql.query(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`,
    [table],
  );
  return rows.map((r) => r.relname as string).filter((n) => !n.endsWith('_default'));
}

const inDefault = async (sql: SqlClient, table: string) =>
  ((await sql.query(`SELECT count(*)::int AS n FROM ${table}_default`))[0] as { n: number }).n;

describe.each(SQL_BACKENDS)('day partitions on %s', (_name, backend) => {
  let sql: SqlClient;
  let now = T0;
  let store: DurableStore;

  beforeAll(async () => {
    sql = await openMigrated(backend);
    store = new DurableStore(sql, { retentionDays: 3, now: () => now });
  });
  afterAll(async () => {
    await backend.dispose(sql);
  });

  it('creates the partitions ahead, and writes land in their day', async () => {
    const r = await store.retentionRound();
    // Three written-day tables' today .. today + 2 … and the archive's expiry days (today + 3 …).
    expect(r?.partitions.created).toBe(9);
    expect(await partitions(sql, 'session_turn')).toEqual(['session_turn_p20260310', 'session_turn_p20260311', 'session_turn_p20260312']);
    expect(await partitions(sql, 'stash_archive')).toEqual([
      'stash_archive_p20260313',
      'stash_archive_p20260314',
      'stash_archive_p20260315',
    ]);
    await store.archiveStash([{ tenant: 't', session: 's', id: 'aaaaaaaaaaaaaaaa', text: 'original' }]);
    await store.saveCheckpoint('t', 's', new Map([[`mask:${ck(1)}`, 'frozen v1']]));
    await store.saveTurns([{ tenant: 't', session: 's', turn: { n: 3, at: now, ttlMs: 3_600_000 } }]);
    const where = await sql.query(
      `SELECT tableoid::regclass::text AS p FROM stash_archive UNION ALL SELECT tableoid::regclass::text FROM session_checkpoint
       UNION ALL SELECT tableoid::regclass::text FROM session_turn ORDER BY 1`,
    );
    expect(where.map((w) => w.p)).toEqual(['session_checkpoint_p20260310', 'session_turn_p20260310', 'stash_archive_p20260313']);
    // A second round the same day has nothing to do.
    expect((await store.retentionRound())?.partitions).toMatchObject({ created: 0, dropped: 0, moved: 0 });
  });

  it('a key written again on a later day: readers answer with the newest row', async () => {
    now = T0 + DAY;
    await store.saveCheckpoint('t', 's', new Map([[`mask:${ck(1)}`, 'frozen v2']]));
    // A late, older turn written on the new day does not win over the newer one of the day before,
    // and the longest TTL asked on either day stays.
    await store.saveTurns([{ tenant: 't', session: 's', turn: { n: 2, at: T0 - 60_000, ttlMs: 300_000 } }]);
    await store.archiveStash([{ tenant: 't', session: 's2', id: 'aaaaaaaaaaaaaaaa', text: 'original' }]);
    expect((await sql.query(`SELECT count(*)::int AS n FROM session_checkpoint`))[0]).toEqual({ n: 2 });
    const cp = await store.loadCheckpoint('t', 's');
    expect(cp.frozen).toEqual(new Map([[`mask:${ck(1)}`, 'frozen v2']]));
    expect(await store.loadTurn('t', 's')).toEqual({ n: 3, at: T0, ttlMs: 3_600_000, rewritten: [] });
    const prev = await store.advanceTurn('t', 's', { n: 4, at: now, ttlMs: 60_000 });
    expect(prev).toEqual({ n: 3, at: T0, ttlMs: 3_600_000, rewritten: [] });
    expect(await store.loadTurn('t', 's')).toEqual({ n: 4, at: now, ttlMs: 3_600_000, rewritten: [] });
    expect((await sql.query(`SELECT count(*)::int AS n FROM stash_archive`))[0]).toEqual({ n: 2 });
  });

  it('drops whole partitions past retention, and the newer copies stay readable', async () => {
    now = T0 + 3 * DAY + 13 * 3_600_000; // 03-14 01:00: the first archive copy expired, T0's writes past 3 days
    const r = await store.retentionRound();
    expect(r?.rows).toMatchObject({ stashes: 1, checkpoints: 1, turns: 1 });
    expect(r!.partitions.dropped).toBeGreaterThanOrEqual(3);
    expect(await partitions(sql, 'session_checkpoint')).not.toContain('session_checkpoint_p20260310');
    expect(await partitions(sql, 'stash_archive')).not.toContain('stash_archive_p20260313');
    expect(await store.getArchivedStash('t', 'aaaaaaaaaaaaaaaa')).toBe('original');
    expect((await store.loadCheckpoint('t', 's')).frozen).toEqual(new Map([[`mask:${ck(1)}`, 'frozen v2']]));
    expect(await store.loadTurn('t', 's')).toMatchObject({ n: 4 });
  });

  it('a day with no partition yet goes to the DEFAULT partition, and moves to its own on the next round', async () => {
    now = T0 + 20 * DAY; // maintenance stalled for two weeks
    await store.saveCheckpoint('t', 'late', new Map([[`mask:${ck(9)}`, 'written while no partition existed']]));
    await store.saveTurns([{ tenant: 't', session: 'late', turn: { n: 1, at: now, ttlMs: 0 } }]);
    expect(await inDefault(sql, 'session_checkpoint')).toBe(1);
    const r = await store.retentionRound();
    expect(r?.partitions.moved).toBe(2);
    expect(await inDefault(sql, 'session_checkpoint')).toBe(0);
    expect(await inDefault(sql, 'session_turn')).toBe(0);
    expect((await store.loadCheckpoint('t', 'late')).frozen.get(`mask:${ck(9)}`)).toBe('written while no partition existed');
    expect(await store.loadTurn('t', 'late')).toMatchObject({ n: 1 });
    // What the stall left behind is gone: only today's partition and those ahead remain.
    expect(await partitions(sql, 'session_turn')).toEqual(['session_turn_p20260330', 'session_turn_p20260331', 'session_turn_p20260401']);
  });
});
