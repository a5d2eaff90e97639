// MIGRATION_DATABASE_URL: the migration runner and MIGRATE_ON_BOOT migrate the database it names
// (a direct URL) while serving stays on DATABASE_URL (here through a real PgBouncer in transaction
// mode); an unusable migration URL is named in the runner's failure and keeps a boot not ready.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PgSqlClient, createStores, loadMigrations, readSchemaStatus } from '@context-guru/storage';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { startPgBouncer, type PgBouncer } from '../../support/pgbouncer';
import { freePort } from '../../support/replicas';
import { uniqueTenant } from '../../unit/storage/hot-store.contract';

jest.setTimeout(60_000);

const ROOT = join(__dirname, '..', '..', '..');
const CLI = join(ROOT, 'libs', 'storage', 'dist', 'sql', 'migrate-cli.js');
const base = { dataDir: '/nonexistent', ttlSeconds: 100, maxEntries: 100, hot: 'memory', durable: 'postgres', purgeEveryMs: 0 };

/** The built runner with only PATH and `env`: its exit code and stderr (JSON lines). */
async function runMigrateCli(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  try {
    const r = await promisify(execFile)(process.execPath, [CLI], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    return { code: 0, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stderr: string };
    return { code: x.code, stderr: x.stderr };
  }
}

/** A Postgres URL on a loopback port nothing listens on. */
async function deadUrl(): Promise<string> {
  return `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`;
}

async function schemaOf(url: string) {
  const sql = new PgSqlClient({ connectionString: url, max: 1 });
  try {
    return await readSchemaStatus(sql, loadMigrations());
  } finally {
    await sql.close();
  }
}

const required = Math.max(...loadMigrations().map((m) => m.version));

describe('the migration runner with MIGRATION_DATABASE_URL', () => {
  let db: FreshDatabase;
  beforeEach(async () => (db = await freshDatabase('migration_url')));
  afterEach(() => db.drop());

  it('migrates the database MIGRATION_DATABASE_URL names, not DATABASE_URL', async () => {
    const run = await runMigrateCli({ DATABASE_URL: await deadUrl(), MIGRATION_DATABASE_URL: db.url });
    expect(run).toMatchObject({ code: 0 });
    expect(run.stderr).toContain('"msg":"migrations complete","target":"postgres","url":"MIGRATION_DATABASE_URL"');
    expect(await schemaOf(db.url)).toEqual({ current: required, required, ok: true });
  });

  it('names MIGRATION_DATABASE_URL when it is the one that fails', async () => {
    const run = await runMigrateCli({ DATABASE_URL: db.url, MIGRATION_DATABASE_URL: await deadUrl() });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/"msg":"migration failed","err":"[^"]*ECONNREFUSED[^"]*","url":"MIGRATION_DATABASE_URL"/);
    const bad = await runMigrateCli({ DATABASE_URL: db.url, MIGRATION_DATABASE_URL: 'mysql://h/db' });
    expect(bad.stderr).toContain('invalid_url: MIGRATION_DATABASE_URL: expected a postgres:// or postgresql:// URL');
    // Nothing reached the database DATABASE_URL names.
    expect((await schemaOf(db.url)).current).toBe(0);
  });
});

describe('MIGRATE_ON_BOOT with a migration URL beside a pooled DATABASE_URL', () => {
  let db: FreshDatabase;
  let bouncer: PgBouncer;
  beforeAll(async () => (bouncer = await startPgBouncer()));
  afterAll(() => bouncer?.stop());
  beforeEach(async () => (db = await freshDatabase('migration_boot')));
  afterEach(() => db.drop());

  it('migrates on a direct connection of its own, closed after; serving goes through PgBouncer', async () => {
    const app = `cg_migrate_${process.pid}_${Date.now().toString(36)}`;
    const direct = `${db.url}?application_name=${app}`;
    const logged: { msg: string; fields?: Record<string, unknown> }[] = [];
    const note = (msg: string, fields?: Record<string, unknown>) => logged.push({ msg, fields });
    const stores = await createStores({
      ...base,
      databaseUrl: bouncer.through(db.url),
      migrationDatabaseUrl: direct,
      log: { info: note, warn: note, error: note },
    });
    try {
      expect(await stores.schema()).toEqual({ current: required, required, ok: true });
      expect(logged.find((l) => l.msg === 'durable store migrated')?.fields).toMatchObject({ via: 'MIGRATION_DATABASE_URL' });
      const durable = stores.durable!;
      const T = uniqueTenant();
      await durable.archiveStash([{ tenant: T, session: 's', id: 'aaaabbbbccccdddd', text: 'through the pooler' }]);
      expect(await durable.getArchivedStash(T, 'aaaabbbbccccdddd')).toBe('through the pooler');
      // The migration's connection is gone once the boot is done (the serving pool keeps its own).
      const watcher = new PgSqlClient({ connectionString: db.url, max: 1 });
      try {
        expect(await watcher.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app])).toEqual([]);
      } finally {
        await watcher.close();
      }
    } finally {
      await stores.close();
    }
  });

  it('a migration URL that does not answer keeps the boot not ready, though DATABASE_URL answers', async () => {
    const stores = await createStores({
      ...base,
      databaseUrl: bouncer.through(db.url),
      migrationDatabaseUrl: await deadUrl(),
      bootRetryMs: 50,
    });
    try {
      await expect(stores.schema()).rejects.toThrow(/ECONNREFUSED/);
      expect((await schemaOf(db.url)).current).toBe(0);
    } finally {
      await stores.close();
    }
  });

  it('refuses a migration URL that is not Postgres, or without the postgres durable store, naming it', async () => {
    const opts = { ...base, databaseUrl: db.url };
    await expect(createStores({ ...opts, migrationDatabaseUrl: 'mysql://h/db' })).rejects.toThrow(/MIGRATION_DATABASE_URL/);
    await expect(createStores({ ...opts, durable: 'none', migrationDatabaseUrl: db.url })).rejects.toThrow(/MIGRATION_DATABASE_URL/);
  });
});
