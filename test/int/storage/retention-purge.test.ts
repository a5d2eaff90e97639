// The retention purge on real Postgres (a database of its own, dropped after): more expired rows
// than one batch all go, rows within retention stay, dead replicas' rows and long-revoked keys go
// while live ones stay, and while another session holds the purge lock this replica deletes
// nothing and reports that it did not run.
import { DurableStore, migrate, PgSqlClient } from '@context-guru/storage';
import { Client } from 'pg';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';

const DAY = 86_400_000;
let db: FreshDatabase;
let sql: PgSqlClient;
let now = Date.parse('2026-06-01T00:00:00Z');

beforeAll(async () => {
  db = await freshDatabase('retention_purge');
  sql = new PgSqlClient({ connectionString: db.url, max: 2 });
  await migrate(sql);
});

afterAll(async () => {
  await sql?.close();
  await db?.drop();
});

const count = async (table: string) => ((await sql.query(`SELECT count(*)::int AS n FROM ${table}`))[0] as { n: number }).n;
const at = (ms: number) => new Date(ms).toISOString();

/** 2 500 expired stashes and turns (past a 1 000-row batch twice), 3 fresh of each. */
async function seed(): Promise<void> {
  const old = at(now - 40 * DAY);
  const fresh = at(now - DAY);
  await sql.query(
    `INSERT INTO stash_archive (tenant, id, text, created_at, expires_at, expires_day)
     SELECT 't', lpad(to_hex(g), 16, '0'), 'x', $1, e, (e AT TIME ZONE 'UTC')::date
     FROM generate_series(1, 2503) g, LATERAL (SELECT CASE WHEN g <= 2500 THEN $1::timestamptz ELSE $2::timestamptz + interval '30 days' END AS e) x`,
    [old, fresh],
  );
  await sql.query(
    `INSERT INTO session_turn (tenant, session, n, at_ms, ttl_ms, updated_at, day)
     SELECT 't', 's' || g, 1, 0, 0, u, (u AT TIME ZONE 'UTC')::date
     FROM generate_series(1, 2503) g, LATERAL (SELECT CASE WHEN g <= 2500 THEN $1::timestamptz ELSE $2::timestamptz END AS u) x`,
    [old, fresh],
  );
  await sql.query(
    `INSERT INTO gateway_replicas (id, started_at, heartbeat_at, generation) VALUES
       ('crashed', $1, $1, 1), ('live', $2, $2, 1)`,
    [at(now - 3 * DAY), at(now - 1000)],
  );
  await sql.query(
    `INSERT INTO api_keys (key_hash, prefix, role, revoked_at) VALUES
       (repeat('a', 64), 'cg_adm_a', 'admin', $1), (repeat('b', 64), 'cg_adm_b', 'admin', $2), (repeat('c', 64), 'cg_adm_c', 'admin', NULL)`,
    [at(now - 40 * DAY), at(now - DAY)],
  );
}

it('purges in batches every table past retention, and keeps what is within it', async () => {
  await seed();
  const store = new DurableStore(sql, { retentionDays: 30, now: () => now });
  const r = await store.purgeExpired(1000);
  expect(r).toMatchObject({ stashes: 2500, turns: 2500, replicas: 1, revokedKeys: 1 });
  expect(await count('stash_archive')).toBe(3);
  expect(await count('session_turn')).toBe(3);
  expect((await sql.query('SELECT id FROM gateway_replicas')).map((x) => x.id)).toEqual(['live']);
  expect((await sql.query('SELECT prefix FROM api_keys ORDER BY prefix')).map((x) => x.prefix)).toEqual(['cg_adm_b', 'cg_adm_c']);
  // Nothing left to do: a second run deletes nothing.
  expect(await store.purgeExpired(1000)).toMatchObject({ stashes: 0, turns: 0, replicas: 0, revokedKeys: 0 });
});

/** A row of `table` past retention at `now`. */
async function expiredRow(table: string): Promise<void> {
  const old = at(now - 40 * DAY);
  if (table === 'api_keys')
    await sql.query(`INSERT INTO api_keys (key_hash, prefix, role, revoked_at) VALUES (repeat('d', 64), 'cg_adm_d', 'admin', $1)`, [old]);
  else
    await sql.query(
      `INSERT INTO stash_archive (tenant, id, text, expires_at, expires_day) VALUES ('t', 'ffffffffffffffff', 'x', $1, ($1::timestamptz AT TIME ZONE 'UTC')::date)`,
      [old],
    );
}

it.each([
  ['the batched purge', `${0x7075}, hashtext(current_schema())`, 'api_keys'],
  ['partition maintenance', `${0x7061}, hashtext(current_schema())`, 'stash_archive'],
])('does nothing while another replica holds %s, and runs once it is released', async (_what, lock, table) => {
  now += 45 * DAY;
  await expiredRow(table);
  const before = await count(table);
  expect(before).toBeGreaterThan(0);
  const holder = new Client({ connectionString: db.url });
  await holder.connect();
  const store = new DurableStore(sql, { retentionDays: 30, now: () => now });
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT pg_advisory_xact_lock(${lock})`);
    expect(await store.purgeExpired(1000)).toBeUndefined();
    expect(await count(table)).toBe(before);
    await holder.query('COMMIT');
  } finally {
    await holder.end();
  }
  expect(await store.purgeExpired(1000)).toBeDefined();
  expect(await count(table)).toBeLessThan(before);
});
