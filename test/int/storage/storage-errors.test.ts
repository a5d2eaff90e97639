// The storage error table: every code of STORAGE_ERRORS is produced here by a real call (real
// Redis, real Postgres, real PGlite, real files), is a StorageError carrying that code, and is
// documented in docs/errors.md. A SQL error the database reported is not mistaken for an outage.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  KeyRing,
  LocalKeyProvider,
  MemoryDataKeyStore,
  STORAGE_ERRORS,
  localKeyProvider,
  MemoryHotStore,
  PgSqlClient,
  PgliteSqlClient,
  RedisHotStore,
  StorageError,
  isStoreUnavailable,
  loadMigrations,
  lockDataDir,
  lockFileOf,
  migrate,
  resolveKinds,
} from '@context-guru/storage';
import { documentedCodes } from '../../support/error-docs';
import { freePort } from '../../support/replicas';
import { startTcpProxy } from '../../support/tcp-proxy';
import { REDIS_URL, uniquePrefix } from './redis-support';
import { DATABASE_URL } from './sql-backends';

jest.setTimeout(60_000);

const seen = new Set<string>();

/** The call must fail with a StorageError of exactly `code`. */
async function expectCode(code: keyof typeof STORAGE_ERRORS, call: () => unknown): Promise<void> {
  let caught: unknown;
  try {
    await call();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(StorageError);
  expect([code, (caught as StorageError).code]).toEqual([code, code]);
  seen.add(code);
}

describe('storage error codes', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'cg-storage-errors-'));
  let lite: PgliteSqlClient; // one embedded database for the file (each open costs seconds)
  beforeAll(async () => {
    lite = await PgliteSqlClient.open();
  });
  afterAll(async () => {
    await lite.close().catch(() => undefined); // the last test closes it on purpose
    rmSync(scratch, { recursive: true, force: true });
  });

  it('store_unavailable: Redis not there at boot, Redis cut under a connected store, Postgres not there', async () => {
    const nobody = await freePort();
    await expectCode('store_unavailable', () => RedisHotStore.connect({ url: `redis://127.0.0.1:${nobody}`, readyTimeoutMs: 300 }));

    const url = new URL(REDIS_URL);
    const proxy = await startTcpProxy(url.hostname, Number(url.port || 6379));
    const store = await RedisHotStore.connect({ url: `redis://127.0.0.1:${proxy.port}`, prefix: uniquePrefix() });
    try {
      await store.putStash('t', 's', [{ id: '0123456789abcdef', text: 'kept' }]);
      await proxy.cut();
      await expectCode('store_unavailable', () => store.getStash('t', '0123456789abcdef'));
      await expectCode('store_unavailable', () => store.putStash('t', 's', [{ id: 'fedcba9876543210', text: 'x' }]));
      await expectCode('store_unavailable', () => store.loadSession('t', 's', []));
    } finally {
      await store.close();
      await proxy.close();
    }

    const pg = new PgSqlClient({ connectionString: `postgres://postgres@127.0.0.1:${nobody}/none`, connectTimeoutMs: 500 });
    await expectCode('store_unavailable', () => pg.query('SELECT 1'));
    await pg.close();
  });

  it('a SQL error the database reported stays what it is (not an outage)', async () => {
    const pg = new PgSqlClient({ connectionString: DATABASE_URL, max: 1 });
    try {
      for (const c of [pg, lite]) {
        const err = await c.query('SELEC 1').catch((e: unknown) => e);
        expect(err).not.toBeInstanceOf(StorageError);
        expect(isStoreUnavailable(err)).toBe(false);
        expect((err as { code?: string }).code).toBe('42601'); // syntax_error, from the server
      }
    } finally {
      await pg.close();
    }
  });

  it('invalid_store_config: an unknown kind, a kind without its URL, a memory store without room', async () => {
    await expectCode('invalid_store_config', () => resolveKinds({ hot: 'memcached' }));
    await expectCode('invalid_store_config', () => resolveKinds({ durable: 'postgres' }));
    await expectCode('invalid_store_config', () => new MemoryHotStore({ maxEntries: 0 }));
  });

  it('data_dir_locked and data_dir_lock_unreadable', async () => {
    const dir = path.join(scratch, 'pglite');
    const release = lockDataDir(dir);
    try {
      await expectCode('data_dir_locked', () => lockDataDir(dir));
    } finally {
      release();
    }
    const other = path.join(scratch, 'corrupt');
    writeFileSync(lockFileOf(other), 'not a lock');
    await expectCode('data_dir_lock_unreadable', () => lockDataDir(other));
  });

  it('migration_invalid and migration_edited', async () => {
    const badName = path.join(scratch, 'bad-name');
    mkdirSync(badName);
    writeFileSync(path.join(badName, '0001-Create.sql'), 'SELECT 1;');
    await expectCode('migration_invalid', () => loadMigrations(badName));
    const twice = path.join(scratch, 'twice');
    mkdirSync(twice);
    writeFileSync(path.join(twice, '0001_a.sql'), 'SELECT 1;');
    writeFileSync(path.join(twice, '0001_b.sql'), 'SELECT 2;');
    await expectCode('migration_invalid', () => loadMigrations(twice));

    const first = [{ version: 1, name: 'a', sql: 'CREATE TABLE a (x int);', checksum: 'one' }];
    await migrate(lite, { migrations: first });
    await expectCode('migration_edited', () => migrate(lite, { migrations: [{ ...first[0]!, checksum: 'two' }] }));
  });

  it('the encryption codes: a missing, a malformed and a mismatched key, a value moved to another id', async () => {
    const dataDir = path.join(scratch, 'keys');
    await expectCode('encryption_key_missing', () => localKeyProvider({ required: true, dataDir }));
    await expectCode('encryption_key_invalid', () => localKeyProvider({ key: 'not-a-key', dataDir }));
    const store = new MemoryDataKeyStore();
    const ring = new KeyRing(new LocalKeyProvider(randomBytes(32)), store);
    const sealed = await ring.seal('t', 'original', 's:1');
    await expectCode('sealed_value_invalid', () => ring.open('t', sealed, 's:2'));
    await expectCode('encryption_key_mismatch', () => new KeyRing(new LocalKeyProvider(randomBytes(32)), store).forTenant('t'));
  });

  it('store_unavailable: the embedded database once closed', async () => {
    await lite.close();
    await expectCode('store_unavailable', () => lite.query('SELECT 1'));
  });

  it('produced every code of the table, and docs/errors.md lists exactly those codes', () => {
    expect([...seen].sort()).toEqual(Object.keys(STORAGE_ERRORS).sort());
    expect(documentedCodes('Storage').map((d) => d.code)).toEqual(Object.keys(STORAGE_ERRORS));
  });
});
