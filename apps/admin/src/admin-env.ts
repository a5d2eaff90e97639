// The standalone admin's environment, parsed once; every bad value is reported together.
export interface AdminEnv {
  adminPort: number;
  host: string;
  databaseUrl?: string;
  redisUrl?: string;
  redisPrefix?: string;
  dataDir: string;
  adminToken?: string;
  bodyLimitBytes: number;
  /** MIGRATE_ON_BOOT (true): false when a separate runner migrates (the Helm Job); /readyz waits for it. */
  migrateOnBoot: boolean;
  /** HOT_STORE / DURABLE_STORE: explicit adapter choices, as for the gateway. */
  hotStore?: string;
  durableStore?: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
}

class AdminEnvError extends Error {}

export function parseAdminEnv(src: Record<string, string | undefined> = process.env): AdminEnv {
  const problems: string[] = [];
  const int = (key: string, def: number, min: number, max: number) => {
    const v = src[key];
    if (v === undefined || v === '') return def;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      problems.push(`${key}=${JSON.stringify(v)}: expected an integer between ${min} and ${max}`);
    return Number.isInteger(n) ? n : def;
  };
  const oneOf = <T extends string>(key: string, allowed: readonly T[], def: T | undefined): T | undefined => {
    const v = src[key];
    if (v === undefined || v === '') return def;
    if (!(allowed as readonly string[]).includes(v)) problems.push(`${key}=${JSON.stringify(v)}: expected one of ${allowed.join(', ')}`);
    return v as T;
  };
  const env: AdminEnv = {
    adminPort: int('ADMIN_PORT', 4001, 0, 65535),
    host: src.HOST || '127.0.0.1',
    databaseUrl: src.DATABASE_URL || undefined,
    redisUrl: src.REDIS_URL || undefined,
    redisPrefix: src.REDIS_PREFIX || undefined,
    dataDir: src.DATA_DIR || './data',
    adminToken: src.ADMIN_TOKEN || undefined,
    bodyLimitBytes: int('ADMIN_BODY_LIMIT_BYTES', 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    migrateOnBoot: oneOf('MIGRATE_ON_BOOT', ['true', 'false'] as const, 'true') === 'true',
    hotStore: oneOf('HOT_STORE', ['memory', 'redis'] as const, undefined),
    durableStore: oneOf('DURABLE_STORE', ['postgres', 'pglite'] as const, undefined),
    logLevel: oneOf('LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const, 'info')!,
  };
  if (env.databaseUrl && !/^postgres(ql)?:\/\//.test(env.databaseUrl)) problems.push('DATABASE_URL: expected postgres:// or postgresql://');
  if (env.redisUrl && !/^rediss?:\/\//.test(env.redisUrl)) problems.push('REDIS_URL: expected redis:// or rediss://');
  if (problems.length) throw new AdminEnvError(`invalid environment:\n  - ${problems.join('\n  - ')}`);
  return env;
}
