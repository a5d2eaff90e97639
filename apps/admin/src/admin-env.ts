// The standalone admin's environment, parsed once; every bad value is reported together, with the
// gateway's environment codes and readers (the admin already depends on the gateway, never the reverse).
import { DEFAULT_AUTH_FAILURES_PER_MINUTE, EnvError, envReaders, POSTGRES_URL, type EnvProblem, type UrlKind } from '@context-guru/engine';
import type { EncryptionOptions, RedisEndpoint } from '@context-guru/storage';

export interface AdminEnv {
  adminPort: number;
  host: string;
  databaseUrl?: string;
  /** MIGRATION_DATABASE_URL: where MIGRATE_ON_BOOT migrates (a direct URL past PgBouncer); default DATABASE_URL. */
  migrationDatabaseUrl?: string;
  /** PG_POOL_MAX: Postgres connections of this process (default 10). */
  pgPoolMax: number;
  /** REDIS_URL, or the REDIS_CLUSTER_NODES / REDIS_SENTINELS target. */
  redisUrl?: RedisEndpoint;
  redisPrefix?: string;
  dataDir: string;
  /** CG_ENCRYPTION_KEY, _PREVIOUS, _REQUIRED: the key that wraps every tenant's data keys (docs/security.md). */
  encryption: EncryptionOptions;
  adminToken?: string;
  /** ADMIN_AUTH_FAILURES_PER_MINUTE: failed authentications per address per minute before it is throttled. */
  authFailuresPerMinute: number;
  bodyLimitBytes: number;
  /** MIGRATE_ON_BOOT (true): false when a separate runner migrates (the Helm Job); /readyz waits for it. */
  migrateOnBoot: boolean;
  /** HOT_STORE / DURABLE_STORE: explicit adapter choices, as for the gateway. */
  hotStore?: string;
  durableStore?: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
}

// The schemes the admin's own clients take (the gateway's readers only ask for a URL).
const REDIS_URL: UrlKind = { protocols: ['redis:', 'rediss:'], expected: 'a redis:// or rediss:// URL' };

/** Throws the gateway's EnvError (codes from its ENV_ERRORS table) listing every bad value. */
export function parseAdminEnv(src: Record<string, string | undefined> = process.env): AdminEnv {
  const problems: EnvProblem[] = [];
  const { int, oneOf, secret, redis, postgres } = envReaders(src, problems);
  const env: AdminEnv = {
    adminPort: int('ADMIN_PORT', 4001, 0, 65535),
    host: src.HOST || '127.0.0.1',
    databaseUrl: postgres('DATABASE_URL', POSTGRES_URL),
    migrationDatabaseUrl: postgres('MIGRATION_DATABASE_URL', POSTGRES_URL),
    pgPoolMax: int('PG_POOL_MAX', 10, 1, 1000),
    redisUrl: redis(REDIS_URL),
    redisPrefix: src.REDIS_PREFIX || undefined,
    dataDir: src.DATA_DIR || './data',
    adminToken: secret('ADMIN_TOKEN', int('ADMIN_TOKEN_MIN_LENGTH', 24, 16, 1024)),
    authFailuresPerMinute: int('ADMIN_AUTH_FAILURES_PER_MINUTE', DEFAULT_AUTH_FAILURES_PER_MINUTE, 1, 100_000),
    encryption: {
      key: src.CG_ENCRYPTION_KEY || undefined,
      previous: src.CG_ENCRYPTION_KEY_PREVIOUS || undefined,
      required: oneOf('CG_ENCRYPTION_KEY_REQUIRED', ['true', 'false'] as const, 'false') === 'true',
    },
    bodyLimitBytes: int('ADMIN_BODY_LIMIT_BYTES', 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    migrateOnBoot: oneOf('MIGRATE_ON_BOOT', ['true', 'false'] as const, 'true') === 'true',
    hotStore: oneOf('HOT_STORE', ['memory', 'redis'] as const, undefined),
    durableStore: oneOf('DURABLE_STORE', ['postgres', 'pglite'] as const, undefined),
    logLevel: oneOf('LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const, 'info'),
  };
  if (problems.length) throw new EnvError(problems);
  return env;
}
