// The one place that picks adapters: hot = memory | redis, durable = postgres | pglite | none.
// Every client is ready (connected, migrated) before this resolves — except a database that does
// not answer yet: then schema() rejects until it has (not ready) — and close() releases them.
// With no URL at all the laptop setup applies: memory hot store + PGlite under dataDir.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { present, type HotStore } from '@context-guru/components';
import { MemoryHotStore } from './memory/memory-hot.store';
import { RedisHotStore } from './redis/redis-hot.store';
import type { RedisEndpoint } from './redis/redis-connection';
import { DurableStore, type PurgeResult } from './sql/durable.store';
import { DurableBoot } from './sql/durable-boot';
import { loadMigrations, type SchemaStatus } from './sql/migrate';
import { PgSqlClient } from './sql/pg-sql.client';
import { PgliteSqlClient, pgliteDir } from './sql/pglite-sql.client';
import type { SqlClient } from './sql/sql-client';
import { StorageError } from './storage-errors';
import { errorText, silentLogger, type StorageLogger } from './storage-logger';
import { TieredHotStore } from './tiered.store';
import { MemoryDataKeyStore, SqlDataKeyStore, type DataKeyStore } from './crypto/data-keys';
import { DeferredKeyProvider, LocalKeyProvider, localKeyProvider, type KeyProvider } from './crypto/key-provider';
import { KeyRing } from './crypto/keyring';

export const HOT_KINDS = ['memory', 'redis'] as const;
export const DURABLE_KINDS = ['postgres', 'pglite', 'none'] as const;
export type HotKind = (typeof HOT_KINDS)[number];
export type DurableKind = (typeof DURABLE_KINDS)[number];

export interface CreateStoresOptions {
  /** REDIS_URL, or a Redis Cluster or Sentinel target (redis/redis-connection.ts). */
  redisUrl?: RedisEndpoint;
  databaseUrl?: string;
  /**
   * MIGRATION_DATABASE_URL: where MIGRATE_ON_BOOT migrates, on one connection of its own closed
   * after (a direct URL while databaseUrl goes through PgBouncer); default databaseUrl.
   */
  migrationDatabaseUrl?: string;
  /** PG_POOL_MAX: Postgres connections this process may open (default 10). */
  poolMax?: number;
  dataDir: string;
  ttlSeconds: number;
  maxEntries: number;
  /**
   * Bytes of values per tenant (unbounded when unset): the in-process hot store evicts past it,
   * Redis and the archive refuse new originals.
   */
  maxBytes?: number;
  /** Bytes of archive writes the write-behind queue holds while Postgres is away (default 128 MiB). */
  writeBehindMaxBytes?: number;
  /** Archive, checkpoint and mark retention (default 30 days). */
  retentionDays?: number;
  /** Explicit adapter choice (default: redis when redisUrl, else memory). Unknown values throw. */
  hot?: string;
  /** Explicit adapter choice (default: postgres when databaseUrl, else pglite). Unknown values throw. */
  durable?: string;
  /** Redis key prefix (default `cg:`). */
  redisPrefix?: string;
  /**
   * Apply pending migrations at boot (default true; safe with many replicas: advisory lock).
   * false: a separate runner migrates (the Helm Job) and schema() reports whether it has.
   */
  migrate?: boolean;
  /** Pause between boot attempts while the database does not answer (default 1 s). */
  bootRetryMs?: number;
  /** Period of the retention purge (default 1 h; 0 disables). */
  purgeEveryMs?: number;
  /** Each purge round's outcome: its rows, undefined when another replica held it, or its error. */
  onPurge?: (result: PurgeResult | undefined, err?: unknown) => void;
  log?: StorageLogger;
  /** What seals originals at rest (docs/security.md); default: the data-dir key file. */
  encryption?: EncryptionOptions;
}

export interface EncryptionOptions {
  /** CG_ENCRYPTION_KEY: the key-encryption key, 32 bytes base64. */
  key?: string;
  /** CG_ENCRYPTION_KEY_PREVIOUS: older keys that still unwrap (a rotation in progress). */
  previous?: string;
  /** CG_ENCRYPTION_KEY_REQUIRED: refuse to start without `key` (the chart sets it). */
  required?: boolean;
  /** A KMS-backed provider instead of the local key (wins over the three above). */
  provider?: KeyProvider;
}

export interface Stores {
  /** What the request path uses: the hot store, fronting the durable one when there is one. */
  hot: HotStore;
  durable?: DurableStore;
  /** Per-tenant data keys: sealing at rest and keyed marker ids. */
  keys: KeyRing;
  /** Chosen adapters, for the boot log. */
  kinds: { hot: HotKind; durable: DurableKind };
  /** The durable schema against this build (undefined without a durable store); once ok, cached. */
  schema(): Promise<SchemaStatus | undefined>;
  close(): Promise<void>;
}

export function resolveKinds(o: Pick<CreateStoresOptions, 'hot' | 'durable' | 'redisUrl' | 'databaseUrl' | 'migrationDatabaseUrl'>): {
  hot: HotKind;
  durable: DurableKind;
} {
  const hot = o.hot ?? (o.redisUrl ? 'redis' : 'memory');
  const durable = o.durable ?? (o.databaseUrl ? 'postgres' : 'pglite');
  if (!(HOT_KINDS as readonly string[]).includes(hot))
    throw new StorageError('invalid_store_config', `unknown hot store "${hot}" (expected ${HOT_KINDS.join(' | ')})`);
  if (!(DURABLE_KINDS as readonly string[]).includes(durable)) {
    throw new StorageError('invalid_store_config', `unknown durable store "${durable}" (expected ${DURABLE_KINDS.join(' | ')})`);
  }
  if (hot === 'redis' && !(typeof o.redisUrl === 'object' || /^rediss?:\/\//.test(o.redisUrl ?? ''))) {
    throw new StorageError(
      'invalid_store_config',
      'hot store redis needs REDIS_URL (redis:// or rediss://), REDIS_CLUSTER_NODES or REDIS_SENTINELS',
    );
  }
  if (durable === 'postgres' && !/^postgres(ql)?:\/\//.test(o.databaseUrl ?? '')) {
    throw new StorageError('invalid_store_config', 'durable store postgres needs DATABASE_URL (postgres:// or postgresql://)');
  }
  if (o.migrationDatabaseUrl !== undefined && (durable !== 'postgres' || !/^postgres(ql)?:\/\//.test(o.migrationDatabaseUrl))) {
    throw new StorageError(
      'invalid_store_config',
      'MIGRATION_DATABASE_URL (postgres:// or postgresql://) is for the postgres durable store, beside DATABASE_URL',
    );
  }
  return { hot: hot as HotKind, durable: durable as DurableKind };
}

/** The embedded durable store's write-behind window (Postgres: the queue's 50 ms). */
const PGLITE_FLUSH_MS = 250;

export async function createStores(o: CreateStoresOptions): Promise<Stores> {
  const log = o.log ?? silentLogger;
  const kinds = resolveKinds(o);
  const migrations = kinds.durable === 'none' ? [] : loadMigrations();
  // Before anything opens: a missing or malformed key is a boot error, not a first-request one.
  const provider = keyProvider(kinds, o);
  const sql = await openSql(kinds.durable, o);
  const boot = sql
    ? new DurableBoot(sql, {
        migrate: o.migrate !== false,
        openMigrationSql: migrationSql(o),
        migrations,
        log,
        waitForDatabase: kinds.durable === 'postgres',
        retryMs: o.bootRetryMs,
      })
    : undefined;
  // The Redis store needs the ring and, without a database, the ring keeps its keys in that
  // Redis: the ring reads whichever store is bound last.
  let dataKeys: DataKeyStore = sql ? new SqlDataKeyStore(sql) : new MemoryDataKeyStore();
  const keys = new KeyRing(provider, {
    list: (scope) => dataKeys.list(scope),
    add: (scope, k) => dataKeys.add(scope, k),
    rewrap: (scope, k) => dataKeys.rewrap(scope, k),
    scopes: () => dataKeys.scopes(),
  });
  let base: HotStore | undefined;
  try {
    await boot?.start();
    if (kinds.hot === 'redis') {
      const redis = await RedisHotStore.connect({
        url: present(o.redisUrl, 'REDIS_URL (resolveKinds requires it for redis)'),
        prefix: o.redisPrefix,
        ttlSeconds: o.ttlSeconds,
        maxEntries: o.maxEntries,
        maxBytes: o.maxBytes,
        log,
        keys,
      });
      if (!sql) dataKeys = redis.dataKeyStore();
      base = redis;
    } else base = new MemoryHotStore({ ttlSeconds: o.ttlSeconds, maxEntries: o.maxEntries, maxBytes: o.maxBytes });
  } catch (err) {
    boot?.close();
    await sql?.close().catch(() => undefined);
    throw err;
  }
  const durable = sql ? new DurableStore(sql, { retentionDays: o.retentionDays, keys }) : undefined;
  // PGlite runs every statement on this process's own thread (≈ 1 ms each, a flush is five or
  // six): a longer window batches more turns into each flush. Its hot store is this process's
  // memory, so the window only bounds what a crash of this process loses, as 50 ms does for Redis.
  const flushMs = kinds.durable === 'pglite' ? PGLITE_FLUSH_MS : undefined;
  const queued = {
    log,
    archiveMaxBytes: o.maxBytes,
    ...(flushMs && { flushMs }),
    ...(o.writeBehindMaxBytes && { maxPendingBytes: o.writeBehindMaxBytes }),
  };
  const hot = durable ? new TieredHotStore(base, durable, queued) : base;

  let closing: Promise<void> | undefined;
  const retention = durable ? retentionRounds(durable, o, () => closing !== undefined) : undefined;
  // A first round before serving, when the database answered and the schema is current (else the
  // hourly timer's): the day's partitions then exist before the first write (one landing in a
  // DEFAULT partition while that partition is being created fails, and is retried once).
  if (retention && boot?.answered)
    await boot
      .schema()
      .then((s) => (s.ok ? retention.round() : undefined))
      .catch(() => undefined);

  return {
    hot,
    durable,
    keys,
    kinds,
    async schema() {
      return boot?.schema();
    },
    close() {
      closing ??= (async () => {
        retention?.stop();
        boot?.close();
        await hot.close(); // flushes queued durable writes first
        await durable?.close();
      })();
      return closing;
    },
  };
}

/**
 * The retention round (durable.retentionRound) every `purgeEveryMs` (default 1 h; 0: never),
 * logged and reported to onPurge; a failure after close() began is not the purge's.
 */
function retentionRounds(durable: DurableStore, o: CreateStoresOptions, closing: () => boolean): { round(): Promise<void>; stop(): void } {
  const log = o.log ?? silentLogger;
  const every = o.purgeEveryMs ?? 3_600_000;
  const round = () =>
    durable
      .retentionRound()
      .then((r) => {
        const { created, dropped, moved } = r?.partitions ?? {};
        log.info(r ? 'retention purge' : 'retention purge: another replica holds it', { ...r?.rows, created, dropped, moved });
        o.onPurge?.(r?.rows);
      })
      .catch((err: unknown) => {
        if (closing()) return;
        log.warn('retention purge failed', { err: errorText(err) });
        o.onPurge?.(undefined, err);
      });
  const timer = every > 0 ? setInterval(() => void round(), every).unref() : undefined;
  return { round: () => (timer ? round() : Promise.resolve()), stop: () => clearInterval(timer) };
}

/**
 * Nothing at rest (memory store, no database): a key for this process's life only. Otherwise the
 * configured provider, CG_ENCRYPTION_KEY, or on a laptop the key file generated into the data dir.
 */
function keyProvider(kinds: { hot: HotKind; durable: DurableKind }, o: CreateStoresOptions): KeyProvider {
  const e = o.encryption ?? {};
  if (e.provider) return e.provider;
  if (kinds.hot === 'memory' && kinds.durable === 'none' && !e.key && !e.required) return new LocalKeyProvider(randomBytes(32));
  const source = { key: e.key, previous: e.previous, required: e.required, dataDir: o.dataDir };
  if (e.key || e.required || kinds.durable === 'pglite') return localKeyProvider(source);
  // Shared state with no key given (development): the data-dir file, made only once something is stored.
  return new DeferredKeyProvider(() => localKeyProvider(source));
}

/** MIGRATION_DATABASE_URL's one connection, opened for each migration (DurableBoot closes it). */
function migrationSql(o: CreateStoresOptions): (() => SqlClient) | undefined {
  const url = o.migrationDatabaseUrl; // resolveKinds allows it with postgres only
  if (url === undefined) return undefined;
  return () => new PgSqlClient({ connectionString: url, max: 1, log: o.log });
}

async function openSql(kind: DurableKind, o: CreateStoresOptions): Promise<SqlClient | undefined> {
  if (kind === 'none') return undefined;
  if (kind === 'postgres') {
    // Not queried here: DurableBoot reaches it (and waits, not ready, while it does not answer).
    return new PgSqlClient({
      connectionString: present(o.databaseUrl, 'DATABASE_URL (resolveKinds requires it for postgres)'),
      max: o.poolMax,
      log: o.log,
    });
  }
  const dir = pgliteDir(o.dataDir);
  mkdirSync(dir, { recursive: true });
  return PgliteSqlClient.open({ dataDir: dir });
}
