// Postgres behind a real PgBouncer in transaction pooling mode (a pool of 3 server connections):
// migrations run through it from two runners at once — each file applied exactly once, and no
// advisory lock left behind on a pooled server connection — and a gateway that migrates and
// serves through it replays a session whose Redis state was lost from the durable copies it
// wrote through the pooler: no bust, markers resolvable, nothing failed open.
import { loadMigrations, migrate, PgSqlClient } from '@context-guru/storage';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { deploymentKeys } from '../../support/forwarded-bytes';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { startPgBouncer, type PgBouncer } from '../../support/pgbouncer';
import { startPrivateRedis, startReplica, type PrivateRedis, type Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { expectNoBust, expectResolvable, failOpen, sendTurn, storeStatus, until, type Sent } from '../../support/session-turns';
import { agentSteps } from '../../support/transcripts';

jest.setTimeout(180_000);

let bouncer: PgBouncer;
const dbs: FreshDatabase[] = [];

beforeAll(async () => {
  bouncer = await startPgBouncer(3);
});

afterAll(async () => {
  await bouncer?.stop();
  for (const db of dbs) await db.drop();
});

async function database(name: string): Promise<FreshDatabase> {
  const db = await freshDatabase(name);
  dbs.push(db);
  return db;
}

/** Advisory locks held in `db` right now, asked of the server directly (not through the pooler). */
async function advisoryLocks(db: FreshDatabase): Promise<number> {
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    const r = await c.query(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    return (r.rows[0] as { n: number }).n;
  } finally {
    await c.end();
  }
}

it('two runners migrate one database through the pooler: each file once, no lock left behind', async () => {
  const db = await database('bouncer_migrate');
  const runners = [0, 1].map(() => new PgSqlClient({ connectionString: bouncer.through(db.url), max: 2 }));
  try {
    const results = await Promise.all(runners.map((r) => migrate(r)));
    const all = loadMigrations().map((m) => `${String(m.version).padStart(4, '0')}_${m.name}`);
    expect(results.flatMap((r) => r.applied).sort()).toEqual(all);
    expect(results.map((r) => r.current)).toEqual([all.length, all.length].map(() => Math.max(...loadMigrations().map((m) => m.version))));
    const ledger = await runners[0]!.query('SELECT count(*)::int AS n FROM schema_migrations');
    expect(ledger[0]?.n).toBe(all.length);
    expect(await advisoryLocks(db)).toBe(0);
    // A third run finds nothing to do and does not wait on a lock.
    expect((await migrate(runners[1]!)).applied).toEqual([]);
  } finally {
    for (const r of runners) await r.close();
  }
});

describe('a gateway on Postgres through PgBouncer', () => {
  let upstream: FakeUpstream;
  let redis: PrivateRedis;
  let gw: Replica;
  /** The gateway's CG_ENCRYPTION_KEY, and its key ring read from outside: what marker ids are keyed by. */
  const KEK = randomBytes(32).toString('base64');
  let kek: ReturnType<typeof deploymentKeys>;

  beforeAll(async () => {
    const db = await database('bouncer_gateway');
    kek = deploymentKeys(db.url, KEK);
    redis = await startPrivateRedis();
    upstream = await startFakeUpstream(jsonScript({ expand: false }));
    gw = await startReplica({
      REDIS_URL: redis.url,
      DATABASE_URL: bouncer.through(db.url),
      PG_POOL_MAX: '4',
      CG_ENCRYPTION_KEY: KEK,
      OPENAI_UPSTREAM: upstream.url,
      ANTHROPIC_UPSTREAM: upstream.url,
      CONFIG: 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n',
    });
  });
  afterAll(async () => {
    await kek?.close();
    await gw?.stop();
    await upstream?.close();
    await redis?.stop();
  });

  it('migrates at boot, and replays a session from what it wrote through the pooler after Redis lost it', async () => {
    const steps = agentSteps(18, 61);
    const sent: Sent[] = [];
    for (let t = 1; t <= 8; t++) sent.push(await sendTurn(gw.url, upstream, 'bounced', steps, t));
    // Past the write-behind window (50 ms): the durable copies of turn 8 are in Postgres.
    await new Promise((r) => setTimeout(r, 300));
    const failedBefore = await failOpen(gw.url);
    await redis.restart(); // empty: everything now comes back from Postgres, through PgBouncer
    await until(async () => (await storeStatus(gw.url)) === 'ok');
    for (let t = 9; t <= 18; t++) sent.push(await sendTurn(gw.url, upstream, 'bounced', steps, t));

    expectNoBust(sent);
    expect(await failOpen(gw.url)).toBe(failedBefore);
    await expectResolvable(gw.url, kek.keys, 'bounced', sent[sent.length - 1]!.forwarded.raw);
    expect(gw.stderr()).not.toMatch(/prepared statement|advisory|unsupported/i);
    expect(bouncer.log()).not.toMatch(/ERROR|WARNING/);
  });
});
