// The replica heartbeat on real Postgres: the first beat writes the whole row; beats whose tenant
// versions did not change write only the time and generation (the tenant map is not sent, so
// its TOASTed value is not rewritten every second); a changed version is written on the next
// beat; a row that vanished (purged as dead) is written whole again.
import { migrate, PgSqlClient, replicasRepository, type Row, type SqlClient } from '@context-guru/storage';
import { createLogger } from '@context-guru/engine';
import { ReplicaHeartbeat } from '../../../apps/gateway/src/tenancy/replica-heartbeat';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';

let db: FreshDatabase;
let pg: PgSqlClient;

beforeAll(async () => {
  db = await freshDatabase('replica_heartbeat');
  pg = new PgSqlClient({ connectionString: db.url, max: 2 });
  await migrate(pg);
});

afterAll(async () => {
  await pg?.close();
  await db?.drop();
});

/** The real client, recording every statement's parameters. */
function recording(inner: SqlClient): SqlClient & { params: unknown[][] } {
  const params: unknown[][] = [];
  return Object.assign(Object.create(inner) as SqlClient, {
    params,
    query<R extends Row = Row>(text: string, p?: readonly unknown[]): Promise<R[]> {
      params.push([...(p ?? [])]);
      return inner.query<R>(text, p);
    },
  });
}

it('writes the tenant map only when it changed, and the whole row again when it is gone', async () => {
  const sql = recording(pg);
  const versions: Record<string, number> = { default: 1, acme: 3 };
  let generation = 7;
  const hb = new ReplicaHeartbeat('r-1', {
    sql,
    sync: { status: () => ({ loaded: true, generation, latest: generation, stale: false }) },
    directory: { versions: () => ({ ...versions }) },
    log: createLogger('error', () => undefined),
  });
  const mapSent = () => sql.params.map((p) => p.some((v) => typeof v === 'string' && v.startsWith('{')));
  const row = async () => (await replicasRepository.live(pg)).find((r) => r.id === 'r-1');

  await hb.beat();
  await hb.beat();
  generation = 8;
  await hb.beat();
  expect(mapSent()).toEqual([true, false, false]);
  expect(await row()).toMatchObject({ generation: 8, tenantVersions: { default: 1, acme: 3 } });

  versions.acme = 4;
  await hb.beat();
  expect(mapSent().slice(3)).toEqual([true]);
  expect((await row())?.tenantVersions).toEqual({ default: 1, acme: 4 });

  await replicasRepository.remove(pg, 'r-1');
  await hb.beat();
  // The touch finds no row, so the same beat writes it whole.
  expect(mapSent().slice(4)).toEqual([false, true]);
  expect((await row())?.tenantVersions).toEqual({ default: 1, acme: 4 });
  await hb.close();
  expect(await row()).toBeUndefined();
});
