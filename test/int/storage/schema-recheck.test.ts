// A ready replica reads its schema again: a database restored from a backup older than the last
// migration makes /readyz's schema fall behind once the re-check is due (not forever "ok" from boot).
import { loadMigrations, migrate, silentLogger, type SqlClient } from '@context-guru/storage';
import { DurableBoot } from '../../../libs/storage/src/sql/durable-boot';
import { postgresBackend } from './sql-backends';

let sql: SqlClient;
beforeEach(async () => {
  sql = await postgresBackend.open();
  await migrate(sql);
});
afterEach(() => postgresBackend.dispose(sql));

const migrations = loadMigrations();
const newest = Math.max(...migrations.map((m) => m.version));
/** The version before the newest (numbers may skip one, e.g. one reserved by a branch not landed yet). */
const previous = Math.max(...migrations.map((m) => m.version).filter((v) => v < newest));

/** What restoring a dump taken before the newest migration leaves: its ledger row is not there. */
const restoreOlder = () => sql.query('DELETE FROM schema_migrations WHERE version = $1', [newest]);

function boot(migrateOnBoot: boolean, clock: { t: number }): DurableBoot {
  return new DurableBoot(sql, {
    migrate: migrateOnBoot,
    migrations,
    log: silentLogger,
    waitForDatabase: true,
    recheckMs: 30_000,
    now: () => clock.t,
  });
}

it('a schema gone back is reported once the re-check is due', async () => {
  const clock = { t: 1_000 };
  const b = boot(false, clock);
  await b.start();
  expect(await b.schema()).toMatchObject({ ok: true, current: newest });
  await restoreOlder();
  clock.t += 1_000;
  expect((await b.schema()).ok).toBe(true); // within the re-check period: the last verdict
  clock.t += 30_000;
  expect(await b.schema()).toMatchObject({ ok: false, current: previous, required: newest });
  b.close();
});
