// Upgrading a database that holds session rows to the partitioned tables (migration 0013), on the
// real Postgres 15 and PGlite: rows written under the old schema read back byte-identically after
// the migration (from the DEFAULT partitions) and after the first retention round (which moves
// them into day partitions), and an original whose expiry a re-archive extended under the old
// schema lives until that expiry, not its first archive's.
import { DurableStore, loadMigrations, migrate, type SqlClient } from '@context-guru/storage';
import { SQL_BACKENDS } from './sql-backends';

jest.setTimeout(60_000);

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 20, 9);
const at = (ms: number) => new Date(ms).toISOString();
const slot = (c: string, i: number) => `${c}:${i.toString(16).padStart(24, '0')}`;
/** What a frozen decision looks like (a marker, non-ASCII, CRLF, trailing newline). */
const REPLACEMENT = '[masked 412 lines] <<cg:0123456789abcdef>> ünïcødé 🚀\r\n[full output: call context_guru_expand]\n';
const ORIGINAL = 'exit 1\r\n\tüñí 🚀 ' + 'y'.repeat(20_000);

const before13 = () => loadMigrations().filter((m) => m.version < 13);

/** Rows as the builds before 0013 wrote them (their statements' shapes, with the old keys). */
async function writeOldRows(sql: SqlClient): Promise<void> {
  await sql.query(
    `INSERT INTO stash_archive (tenant, id, text, created_at, expires_at) VALUES
       ('acme', 'aaaaaaaaaaaaaaaa', $1, $2, $3),  -- archived 25 days ago, re-archived 10 days ago: expires in 20
       ('acme', 'bbbbbbbbbbbbbbbb', 'short-lived', $2, $4)`,
    [ORIGINAL, at(NOW - 25 * DAY), at(NOW + 20 * DAY), at(NOW + 5 * DAY)],
  );
  for (let i = 0; i < 3; i++)
    await sql.query(`INSERT INTO session_checkpoint (tenant, session, slot, replacement, updated_at) VALUES ('acme', 'sess', $1, $2, $3)`, [
      slot('mask', i),
      `${REPLACEMENT}#${i}`,
      at(NOW - (i + 1) * DAY),
    ]);
  await sql.query(`INSERT INTO session_state (tenant, session, offloaded, arm, updated_at) VALUES ('acme', 'sess', true, 'holdout', $1)`, [
    at(NOW - DAY),
  ]);
  await sql.query(
    `INSERT INTO session_turn (tenant, session, n, at_ms, ttl_ms, rewritten, updated_at) VALUES ('acme', 'sess', 7, $1, 3600000, '2,5', $2)`,
    [NOW - DAY, at(NOW - DAY)],
  );
}

describe.each(SQL_BACKENDS)('upgrade to partitioned session tables on %s', (_name, backend) => {
  let sql: SqlClient;
  let now = NOW;
  let store: DurableStore;

  beforeAll(async () => {
    sql = await backend.open();
    await migrate(sql, { migrations: before13() });
    await writeOldRows(sql);
    const res = await migrate(sql);
    expect(res.applied).toContain('0013_partitioned_session_tables');
    store = new DurableStore(sql, { retentionDays: 30, now: () => now });
  });
  afterAll(async () => {
    await backend.dispose(sql);
  });

  async function expectEverythingReadable(): Promise<void> {
    expect(await store.getArchivedStash('acme', 'aaaaaaaaaaaaaaaa')).toBe(ORIGINAL);
    expect(await store.getArchivedStash('acme', 'bbbbbbbbbbbbbbbb')).toBe('short-lived');
    const cp = await store.loadCheckpoint('acme', 'sess');
    expect(cp.frozen).toEqual(new Map([0, 1, 2].map((i) => [slot('mask', i), `${REPLACEMENT}#${i}`])));
    expect(cp).toMatchObject({ offloaded: true, arm: 'holdout' });
    expect(await store.loadTurn('acme', 'sess')).toEqual({ n: 7, at: NOW - DAY, ttlMs: 3_600_000, rewritten: [2, 5] });
  }

  it('reads every old row back after the migration, before any maintenance', async () => {
    await expectEverythingReadable();
    const inDefault = await sql.query(
      `SELECT (SELECT count(*) FROM stash_archive_default)::int AS s, (SELECT count(*) FROM session_checkpoint_default)::int AS c,
              (SELECT count(*) FROM session_turn_default)::int AS t`,
    );
    expect(inDefault[0]).toEqual({ s: 2, c: 3, t: 1 });
  });

  it('the first retention round moves them into day partitions; they still read the same', async () => {
    const r = await store.retentionRound();
    expect(r?.partitions.moved).toBe(6);
    expect(r?.rows).toMatchObject({ stashes: 0, checkpoints: 0, turns: 0 });
    const left = await sql.query(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM stash_archive_default UNION ALL SELECT 1 FROM session_checkpoint_default
         UNION ALL SELECT 1 FROM session_turn_default) d`,
    );
    expect(left[0]).toEqual({ n: 0 });
    await expectEverythingReadable();
  });

  it('an original lives until its extended expiry, then its partition is dropped', async () => {
    now = NOW + 19 * DAY;
    await store.retentionRound();
    expect(await store.getArchivedStash('acme', 'aaaaaaaaaaaaaaaa')).toBe(ORIGINAL);
    expect(await store.getArchivedStash('acme', 'bbbbbbbbbbbbbbbb')).toBeNull();
    now = NOW + 21 * DAY;
    const r = await store.retentionRound();
    expect(r?.rows.stashes).toBe(1);
    expect((await sql.query('SELECT count(*)::int AS n FROM stash_archive'))[0]).toEqual({ n: 0 });
  });
});
