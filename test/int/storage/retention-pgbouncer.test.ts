// The retention round through a real PgBouncer in transaction pooling mode (a pool of 2 server
// connections, so consecutive transactions of one client land on different ones): three replicas
// run it at once, over and over across simulated days, while a fourth writes. Every partition is
// made once (no "already exists" from two makers), past days are dropped, nothing waits in a
// DEFAULT partition, and no advisory lock is left on a pooled server connection.
import { DurableStore, migrate, PgSqlClient } from '@context-guru/storage';
import { Client } from 'pg';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { startPgBouncer, type PgBouncer } from '../../support/pgbouncer';

jest.setTimeout(120_000);

const DAY = 86_400_000;
let bouncer: PgBouncer;
let db: FreshDatabase;
const clients: PgSqlClient[] = [];

beforeAll(async () => {
  bouncer = await startPgBouncer(2);
  db = await freshDatabase('retention_bouncer');
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await bouncer?.stop();
  await db?.drop();
});

async function direct<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

it('three replicas maintain the partitions through the pooler: each made once, none left behind', async () => {
  const pooled = () => {
    const c = new PgSqlClient({ connectionString: bouncer.through(db.url), max: 2 });
    clients.push(c);
    return c;
  };
  const first = pooled();
  await migrate(first);
  const clock = { t: Date.UTC(2026, 3, 1, 10) };
  const replicas = [first, pooled(), pooled()].map((c) => new DurableStore(c, { retentionDays: 2, now: () => clock.t }));
  const writer = new DurableStore(pooled(), { retentionDays: 2, now: () => clock.t });
  let ran = 0;
  for (let day = 0; day < 6; day++) {
    clock.t += DAY;
    const rounds = replicas.map((r) => r.retentionRound());
    for (let s = 0; s < 20; s++) {
      await writer.saveCheckpoint('t', `d${day}-s${s}`, new Map([[`mask:${String(s).padStart(24, '0')}`, `frozen ${day}/${s}`]]));
      await writer.saveTurns([{ tenant: 't', session: `d${day}-s${s}`, turn: { n: 1, at: clock.t, ttlMs: 0 } }]);
    }
    ran += (await Promise.all(rounds)).filter((r) => r !== undefined).length;
  }
  await replicas[0]!.retentionRound();
  expect(ran).toBeGreaterThanOrEqual(6);
  const state = await direct(async (c) => {
    const parts = await c.query(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'session_checkpoint'::regclass AND c.relname <> 'session_checkpoint_default' ORDER BY 1`,
    );
    const fallback = await c.query('SELECT count(*)::int AS n FROM session_checkpoint_default');
    const rows = await c.query('SELECT count(*)::int AS n FROM session_checkpoint');
    const locks = await c.query(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    return {
      parts: parts.rows.map((r) => r.relname as string),
      fallback: fallback.rows[0].n as number,
      rows: rows.rows[0].n as number,
      locks: locks.rows[0].n as number,
    };
  });
  // Day 6 is 2026-04-07: two days of retention behind it, two ahead.
  expect(state).toEqual({
    parts: [
      'session_checkpoint_p20260405',
      'session_checkpoint_p20260406',
      'session_checkpoint_p20260407',
      'session_checkpoint_p20260408',
      'session_checkpoint_p20260409',
    ],
    fallback: 0,
    rows: 60,
    locks: 0,
  });
});
