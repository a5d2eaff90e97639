// The one place that picks adapters: hot = memory | redis, durable = postgres | pglite | none.
// Every client is ready (connected, migrated) before this resolves — except a database that does
// not answer yet: then schema() rejects until it has (not ready) — and close() releases them.
// With no URL at all the laptop setup applies: memory hot store + PGlite under dataDir.
import { mkdirSync } from 'node:fs';
import { present, type HotStore } from '@context-guru/components';
import { MemoryHotStore } from './memory/memory-hot.store';
import { RedisHotStore } from './redis/redis-hot.store';
import { DurableStore } from './sql/durable.store';
import { DurableBoot } from './sql/durable-boot';
import { loadMigrations, type SchemaStatus } from './sql/migrate';
import { PgSqlClient } from './sql/pg-sql.client';
import { PgliteSqlClient, pgliteDir } from './sql/pglite-sql.client';
import type { SqlClient } from './sql/sql-client';
import { StorageError } from './storage-errors';
import { errorText, silentLogger, type StorageLogger } from './storage-logger';
import { TieredHotStore } from './tiered.store';

export const HOT_KINDS = ['memory', 'redis'] as const;
export const DURABLE_KINDS = ['postgres', 'pglite', 'none'] as const;
export type HotKind = (typeof HOT_KINDS)[number];
export type DurableKind = (typeof DURABLE_KINDS)[number];

export interface CreateStoresOptions {
  redisUrl?: string;
  databaseUrl?: string;
  dataDir: string;
  ttlSeconds: number;
  maxEntries: number;
  /** Bytes of values per tenant in the in-process hot store (unbounded when unset). */
  maxBytes?: number;
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
  log?: StorageLogger;
}

export interface Stores {
  /** What the request path uses: the hot store, fronting the durable one when there is one. */
  hot: HotStore;
  durable?: DurableStore;
  /** Chosen adapters, for the boot log. */
  kinds: { hot: HotKind; durable: DurableKind };
  /** The durable schema against this build (undefined without a durable store); once ok, cached. */
  schema(): Promise<SchemaStatus | undefined>;
  close(): Promise<void>;
}

export function resolveKinds(o: Pick<CreateStoresOptions, 'hot' | 'durable' | 'redisUrl' | 'databaseUrl'>): {
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
  if (hot === 'redis' && !/^rediss?:\/\//.test(o.redisUrl ?? ''))
    throw new StorageError('invalid_store_config', 'hot store redis needs REDIS_URL (redis:// or rediss://)');
  if (durable === 'postgres' && !/^postgres(ql)?:\/\//.test(o.databaseUrl ?? '')) {
    throw new StorageError('invalid_store_config', 'durable store postgres needs DATABASE_URL (postgres:// or postgresql://)');
  }
  return { hot: hot as HotKind, durable: durable as DurableKind };
}

/** The embedded durable store's write-behind window (Postgres: the queue's 50 ms). */
const PGLITE_FLUSH_MS = 250;

export async function createStores(o: CreateStoresOptions): Promise<Stores> {
  const log = o.log ?? silentLogger;
  const kinds = resolveKinds(o);
  const migrations = kinds.durable === 'none' ? [] : loadMigrations();
  const sql = await openSql(kinds.durable, o);
  const boot = sql
    ? new DurableBoot(sql, {
        migrate: o.migrate !== false,
        migrations,
        log,
        waitForDatabase: kinds.durable === 'postgres',
        retryMs: o.bootRetryMs,
      })
    : undefined;
  let base: HotStore | undefined;
  try {
    await boot?.start();
    base =
      kinds.hot === 'redis'
        ? await RedisHotStore.connect({
            url: present(o.redisUrl, 'REDIS_URL (resolveKinds requires it for redis)'),
            prefix: o.redisPrefix,
            ttlSeconds: o.ttlSeconds,
            maxEntries: o.maxEntries,
            log,
          })
        : new MemoryHotStore({ ttlSeconds: o.ttlSeconds, maxEntries: o.maxEntries, maxBytes: o.maxBytes });
  } catch (err) {
    boot?.close();
    await sql?.close().catch(() => undefined);
    throw err;
  }
  const durable = sql ? new DurableStore(sql, { retentionDays: o.retentionDays }) : undefined;
  // PGlite runs every statement on this process's own thread (≈ 1 ms each, a flush is five or
  // six): a longer window batches more turns into each flush. Its hot store is this process's
  // memory, so the window only bounds what a crash of this process loses, as 50 ms does for Redis.
  const flushMs = kinds.durable === 'pglite' ? PGLITE_FLUSH_MS : undefined;
  const hot = durable ? new TieredHotStore(base, durable, { log, ...(flushMs && { flushMs }) }) : base;

  const every = o.purgeEveryMs ?? 3_600_000;
  const timer =
    durable && every > 0
      ? setInterval(() => {
          durable
            .purgeExpired()
            .then((r) => log.info('retention purge', { ...r }))
            .catch((err: unknown) => log.warn('retention purge failed', { err: errorText(err) }));
        }, every).unref()
      : undefined;

  let closing: Promise<void> | undefined;
  return {
    hot,
    durable,
    kinds,
    async schema() {
      return boot?.schema();
    },
    close() {
      closing ??= (async () => {
        if (timer) clearInterval(timer);
        boot?.close();
        await hot.close(); // flushes queued durable writes first
        await durable?.close();
      })();
      return closing;
    },
  };
}

async function openSql(kind: DurableKind, o: CreateStoresOptions): Promise<SqlClient | undefined> {
  if (kind === 'none') return undefined;
  if (kind === 'postgres') {
    // Not queried here: DurableBoot reaches it (and waits, not ready, while it does not answer).
    return new PgSqlClient({
      connectionString: present(o.databaseUrl, 'DATABASE_URL (resolveKinds requires it for postgres)'),
      log: o.log,
    });
  }
  const dir = pgliteDir(o.dataDir);
  mkdirSync(dir, { recursive: true });
  return PgliteSqlClient.open({ dataDir: dir });
}
