// createStores: adapter choice, readiness at boot (a database that does not answer yet is waited
// for, one that answers with an error fails the boot), and the embedded setup surviving a restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PgSqlClient, createStores, loadMigrations, migrate, resolveKinds } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { uniqueTenant, writes } from '../../unit/storage/hot-store.contract';
import { REDIS_URL, flushPrefix, uniquePrefix } from './redis-support';
import { DATABASE_URL } from './sql-backends';
import { startTcpProxy } from '../../support/tcp-proxy';

jest.setTimeout(60_000);

const ck = (i: number) => i.toString(16).padStart(24, '0');
const base = { dataDir: '/nonexistent', ttlSeconds: 100, maxEntries: 100 };

describe('createStores', () => {
  it('picks adapters from the URLs and throws on unknown or unusable choices', () => {
    expect(resolveKinds({})).toEqual({ hot: 'memory', durable: 'pglite' });
    expect(resolveKinds({ redisUrl: 'redis://h:6379', databaseUrl: 'postgres://u@h/db' })).toEqual({ hot: 'redis', durable: 'postgres' });
    expect(resolveKinds({ durable: 'none' })).toEqual({ hot: 'memory', durable: 'none' });
    expect(() => resolveKinds({ hot: 'memcached' })).toThrow(/unknown hot store "memcached"/);
    expect(() => resolveKinds({ durable: 'sqlite' })).toThrow(/unknown durable store "sqlite"/);
    expect(() => resolveKinds({ hot: 'redis' })).toThrow(/needs REDIS_URL/);
    expect(() => resolveKinds({ databaseUrl: 'mysql://h/db' })).toThrow(/needs DATABASE_URL/);
  });

  it('a Postgres that does not answer at boot leaves the stores up and schema() rejecting; once it answers they migrate', async () => {
    const schema = `cg_unreach_${process.pid}_${Date.now().toString(36)}`;
    const adminSql = new PgSqlClient({ connectionString: DATABASE_URL, max: 1 });
    await adminSql.exec(`CREATE SCHEMA "${schema}"`);
    const target = new URL(DATABASE_URL);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.cut();
    target.port = String(proxy.port);
    const url = `${target.toString()}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const stores = await createStores({ ...base, durable: 'postgres', databaseUrl: url, bootRetryMs: 50 });
    try {
      await expect(stores.schema()).rejects.toThrow(/ECONNREFUSED/);
      expect(await adminSql.query('SELECT 1 FROM information_schema.tables WHERE table_schema = $1', [schema])).toEqual([]);
      await proxy.restore();
      // The retry migrates without anyone asking; schema() then reports the build's schema.
      const required = Math.max(...loadMigrations().map((m) => m.version));
      let status = await stores.schema().catch(() => undefined);
      for (let i = 0; i < 200 && !status?.ok; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = await stores.schema().catch(() => undefined);
      }
      expect(status).toEqual({ current: required, required, ok: true });
      const tables = await adminSql.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema]);
      expect(tables.length).toBeGreaterThan(0);
    } finally {
      await stores.close();
      await proxy.close();
      await adminSql.exec(`DROP SCHEMA "${schema}" CASCADE`);
      await adminSql.close();
    }
  });

  it('a Postgres that answers with an error (no such database) still fails the boot: waiting would not fix it', async () => {
    const url = new URL(DATABASE_URL);
    url.pathname = `/cg_missing_${process.pid}`;
    await expect(createStores({ ...base, durable: 'postgres', databaseUrl: url.toString() })).rejects.toThrow(/does not exist/);
  });

  it('embedded (no URLs): memory + PGlite under dataDir; a restart keeps archived stashes and checkpoints', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cg-stores-'));
    try {
      const T = uniqueTenant();
      const first = await createStores({ ...base, dataDir });
      expect(first.kinds).toEqual({ hot: 'memory', durable: 'pglite' });
      expect(first.hot.kind).toBe('memory+pglite');
      await first.hot.putStash(T, 'sess', [{ id: '0123456789abcdef', text: 'original ✓' }]);
      await first.hot.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: 'frozen ✓' }, true));
      await first.close(); // flushes the write-behind queue

      const second = await createStores({ ...base, dataDir });
      try {
        expect(await second.hot.getStash(T, '0123456789abcdef')).toBe('original ✓');
        expect(await second.hot.owns(T, 'sess', '0123456789abcdef')).toBe(true);
        const snap = await second.hot.loadSession(T, 'sess', [ck(1)]);
        expect(snap.frozen.get(`mask:${ck(1)}`)).toBe('frozen ✓');
        expect(snap.offloaded).toBe(true);
        expect(snap.lost.size).toBe(0);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('redis + postgres: migrates at boot and serves through the tiered store', async () => {
    const schema = `cg_stores_${process.pid}_${Date.now().toString(36)}`;
    const adminSql = new PgSqlClient({ connectionString: DATABASE_URL, max: 1 });
    await adminSql.exec(`CREATE SCHEMA "${schema}"`);
    const prefix = uniquePrefix();
    const url = `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const stores = await createStores({ ...base, redisUrl: REDIS_URL, databaseUrl: url, redisPrefix: prefix });
    const redis = new Redis(REDIS_URL);
    try {
      expect(stores.kinds).toEqual({ hot: 'redis', durable: 'postgres' });
      expect(stores.hot.kind).toBe('redis+postgres');
      const tables = await adminSql.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [schema]);
      expect(tables.map((r) => r.table_name)).toEqual(
        expect.arrayContaining([
          'schema_migrations',
          'stash_archive',
          'session_checkpoint',
          'ownership',
          'kept',
          'tenants',
          'api_keys',
          'audit_log',
        ]),
      );
      const T = uniqueTenant();
      await stores.hot.putStash(T, 'sess', [{ id: 'aaaabbbbccccdddd', text: 'x' }]);
      await stores.hot.ping();
      expect(await stores.hot.getStash(T, 'aaaabbbbccccdddd')).toBe('x');
    } finally {
      await stores.close();
      await flushPrefix(redis, prefix);
      await redis.quit();
      await adminSql.exec(`DROP SCHEMA "${schema}" CASCADE`);
      await adminSql.close();
    }
  });

  it('migrate: false leaves the schema alone and reports it older than the build until a runner migrates it', async () => {
    const schema = `cg_schema_${process.pid}_${Date.now().toString(36)}`;
    const adminSql = new PgSqlClient({ connectionString: DATABASE_URL, max: 1 });
    await adminSql.exec(`CREATE SCHEMA "${schema}"`);
    const url = `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const required = Math.max(...loadMigrations().map((m) => m.version));
    const stores = await createStores({ ...base, durable: 'postgres', databaseUrl: url, migrate: false });
    const runner = new PgSqlClient({ connectionString: url, max: 1 });
    try {
      const tables = await adminSql.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema]);
      expect(tables).toEqual([]);
      expect(await stores.schema()).toEqual({ current: 0, required, ok: false });
      // An older schema (only the first migration applied) is still not enough.
      await migrate(runner, { migrations: loadMigrations().slice(0, 1) });
      expect(await stores.schema()).toEqual({ current: 1, required, ok: false });
      await migrate(runner);
      expect(await stores.schema()).toEqual({ current: required, required, ok: true });
    } finally {
      await runner.close();
      await stores.close();
      await adminSql.exec(`DROP SCHEMA "${schema}" CASCADE`);
      await adminSql.close();
    }
  });
});
