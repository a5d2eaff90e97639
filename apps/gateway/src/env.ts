// The environment is parsed once at boot; every bad value is reported together, each with its code
// (env-errors.ts), so an operator fixes a deployment in one pass instead of one crash at a time.
import type { EncryptionOptions, RedisEndpoint } from '@context-guru/storage';
import {
  EnvError,
  type EnvProblem,
  envReaders,
  HTTP_URL,
  POSTGRES_URL,
  DEFAULT_EXPAND_LIMITS,
  type ExpandLimits,
  readPriceTable,
  type FamilyPrice,
  type CacheMode,
  type InjectMode,
  DEFAULT_AUTH_FAILURES_PER_MINUTE,
  DEFAULT_PAYBACK_TURNS,
} from '@context-guru/engine';
import { UPSTREAM_CONNECTIONS } from './http/upstream.client';
import { readModelEnv, type ModelEnv } from './model/model-env';
import { readCloudEnv, type CloudEnv } from './cloud/cloud-env';

export interface Env {
  port: number;
  adminPort: number;
  host: string;
  role: 'all' | 'gateway' | 'admin';
  openaiUpstream: string;
  anthropicUpstream: string;
  /** Gemini's generateContent API (`/v1beta/models/…` is appended as the client asked for it). */
  geminiUpstream: string;
  preset: string | undefined;
  config: string | undefined;
  /** REDIS_URL as given, or the REDIS_CLUSTER_NODES / REDIS_SENTINELS target. */
  redisUrl: RedisEndpoint | undefined;
  databaseUrl: string | undefined;
  /** MIGRATION_DATABASE_URL: where MIGRATE_ON_BOOT migrates (a direct URL past PgBouncer); default DATABASE_URL. */
  migrationDatabaseUrl: string | undefined;
  /** PG_POOL_MAX: Postgres connections per process (replicas × this must fit max_connections, or PgBouncer's pool). */
  pgPoolMax: number;
  /** memory | redis (default: redis when REDIS_URL is set). */
  hotStore: string | undefined;
  /** postgres | pglite | none (default: postgres when DATABASE_URL is set, else pglite). */
  durableStore: string | undefined;
  retentionDays: number;
  /** MIGRATE_ON_BOOT (true): false when a separate runner migrates (the Helm Job); readiness then waits for it. */
  migrateOnBoot: boolean;
  redisPrefix: string | undefined;
  dataDir: string;
  /** CG_ENCRYPTION_KEY, _PREVIOUS, _REQUIRED: the key that wraps every tenant's data keys (docs/security.md). */
  encryption: EncryptionOptions;
  adminToken: string | undefined;
  /** ADMIN_AUTH_FAILURES_PER_MINUTE: the embedded admin's failed authentications per address per minute. */
  adminAuthFailuresPerMinute: number;
  /**
   * OPS_TOKEN: the bearer token of /metrics and /readyz's detail (tenant ids, pipelines). Unset:
   * those are open only while the gateway listens on loopback (the laptop default), else refused.
   */
  opsToken: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  cacheMode: CacheMode;
  injectExpand: InjectMode;
  bodyLimitBytes: number;
  /** BODY_READ_TIMEOUT_MS: a body not in within this of its read starting is answered 408. */
  bodyReadTimeoutMs: number;
  /** BODY_DISCARD_BYTES: a body declared over the limit but within this is drained, so its 413 is read. */
  bodyDiscardBytes: number;
  /** BODY_SLOTS_PER_CLIENT: bodies one client (tenant and address) may be reading at once. */
  bodySlotsPerClient: number;
  upstreamHeaderTimeoutMs: number;
  /** No upstream body byte for this long ends the reply (a stream with the dialect's error event). */
  upstreamIdleTimeoutMs: number;
  /** On SIGTERM, how long open streams may run before each is ended with the dialect's error event. */
  drainDeadlineMs: number;
  upstreamConnectTimeoutMs: number;
  maxExpandRounds: number;
  /** COMPACT_PER_MINUTE: /compact calls per tenant per minute (a token bucket; 429 past it). */
  compactPerMinute: number;
  /** COMPACT_PRESET_OVERRIDE=true: /compact honours `?preset=`; otherwise it is refused (403). */
  compactPresetOverride: boolean;
  /** EXPAND_CALLS_PER_ROUND / EXPAND_BYTES_PER_ANSWER: what a model's expand calls may add to a continuation. */
  expandLimits: ExpandLimits;
  /** STORE_MAX_MB_PER_TENANT: what one tenant may hold in the hot store (in-process: evicted past it; Redis: refused), in MiB. */
  storeMaxMbPerTenant: number;
  /** WRITE_BEHIND_MAX_MB (128): MiB the writes queued for Postgres may hold (originals never dropped: new ones refused). */
  writeBehindMaxMb: number;
  /** REWRITE_PAYBACK_TURNS (2): a priced rewrite inside the cached prefix must pay back within this many turns; 0 = never rewrite there. */
  rewritePaybackTurns: number;
  /** Memory the turn cache may hold (previous turns' decoded views and outputs), in MiB. */
  turnCacheMb: number;
  /** Requests admitted to compression (from arrival) past which new ones are shed (COMPRESSION_SLOTS; 0 = 2 per usable CPU: the cgroup quota, else the cores). */
  compressionSlots: number | undefined;
  /** REQUIRE_TENANT_KEY=true: a request without a tenant key is refused (401), not served as `default`. */
  requireTenantKey: boolean;
  /** Distinct `tenant` metric label values before the rest fold into `other` (TENANT_LABEL_CAP). */
  tenantLabelCap: number;
  /** REPLICA_ID: this replica's name in gateway_replicas (default host-pid-random). */
  replicaId: string | undefined;
  /** CHEAP_MODEL*, CHEAP_MODEL_CONCURRENT, CONTEXT_GURU_LLM_TIMEOUT, CONTEXT_GURU_SUMMARIZE_TIMEOUT. */
  model: ModelEnv;
  /** PRICE_TABLE overrides of the provider price table (observability/price-table.ts). */
  prices: FamilyPrice[];
  /** BEDROCK_UPSTREAM, VERTEX_UPSTREAM and the gateway's own cloud credentials (cloud/cloud-env.ts). */
  cloud: CloudEnv;
}

type Source = Record<string, string | undefined>;

export function parseEnv(src: Source = process.env): Env {
  const problems: EnvProblem[] = [];
  const { int, oneOf, url, secret, redis, postgres } = envReaders(src, problems);
  const env: Env = {
    port: int('PORT', 4000, 0, 65535),
    adminPort: int('ADMIN_PORT', 4001, 0, 65535),
    host: src.HOST || '127.0.0.1',
    role: oneOf('CG_ROLE', ['all', 'gateway', 'admin'] as const, 'all'),
    openaiUpstream: url('OPENAI_UPSTREAM', 'https://api.openai.com', HTTP_URL),
    anthropicUpstream: url('ANTHROPIC_UPSTREAM', 'https://api.anthropic.com', HTTP_URL),
    geminiUpstream: url('GEMINI_UPSTREAM', 'https://generativelanguage.googleapis.com', HTTP_URL),
    preset: src.PRESET || undefined,
    config: src.CONFIG || undefined,
    redisUrl: redis(),
    databaseUrl: postgres('DATABASE_URL'),
    migrationDatabaseUrl: postgres('MIGRATION_DATABASE_URL', POSTGRES_URL),
    pgPoolMax: int('PG_POOL_MAX', 10, 1, 1000),
    hotStore: oneOf('HOT_STORE', ['memory', 'redis'] as const, undefined),
    durableStore: oneOf('DURABLE_STORE', ['postgres', 'pglite', 'none'] as const, undefined),
    retentionDays: int('RETENTION_DAYS', 30, 1, 3650),
    migrateOnBoot: oneOf('MIGRATE_ON_BOOT', ['true', 'false'] as const, 'true') === 'true',
    redisPrefix: src.REDIS_PREFIX || undefined,
    dataDir: src.DATA_DIR || './data',
    adminToken: secret('ADMIN_TOKEN', int('ADMIN_TOKEN_MIN_LENGTH', 24, 16, 1024)),
    adminAuthFailuresPerMinute: int('ADMIN_AUTH_FAILURES_PER_MINUTE', DEFAULT_AUTH_FAILURES_PER_MINUTE, 1, 100_000),
    encryption: {
      key: src.CG_ENCRYPTION_KEY || undefined,
      previous: src.CG_ENCRYPTION_KEY_PREVIOUS || undefined,
      required: oneOf('CG_ENCRYPTION_KEY_REQUIRED', ['true', 'false'] as const, 'false') === 'true',
    },
    opsToken: secret('OPS_TOKEN', 24),
    logLevel: oneOf('LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const, 'info'),
    cacheMode: oneOf('CACHE_MODE', ['auto', 'on', 'off'] as const, 'auto'),
    injectExpand: oneOf('INJECT_EXPAND', ['auto', 'always', 'never'] as const, 'auto'),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 32 * 1024 * 1024, 1024),
    bodyReadTimeoutMs: int('BODY_READ_TIMEOUT_MS', 60_000, 1, 3_600_000),
    bodyDiscardBytes: int('BODY_DISCARD_BYTES', 64 * 1024 * 1024, 0),
    bodySlotsPerClient: int('BODY_SLOTS_PER_CLIENT', 32, 1, UPSTREAM_CONNECTIONS),
    upstreamHeaderTimeoutMs: int('UPSTREAM_HEADER_TIMEOUT_MS', 600_000, 1),
    // Longer than the providers' keep-alive ping interval, so a quiet but alive stream survives.
    upstreamIdleTimeoutMs: int('UPSTREAM_IDLE_TIMEOUT_MS', 120_000, 1),
    upstreamConnectTimeoutMs: int('UPSTREAM_CONNECT_TIMEOUT_MS', 10_000, 1),
    // Below the pod's grace period (the chart derives one from the other): the flush and exit follow.
    drainDeadlineMs: int('DRAIN_DEADLINE_MS', 600_000, 0, 86_400_000),
    maxExpandRounds: int('MAX_EXPAND_ROUNDS', 3, 0, 10),
    compactPerMinute: int('COMPACT_PER_MINUTE', 120, 1, 1_000_000),
    compactPresetOverride: oneOf('COMPACT_PRESET_OVERRIDE', ['true', 'false'] as const, 'false') === 'true',
    expandLimits: {
      callsPerRound: int('EXPAND_CALLS_PER_ROUND', DEFAULT_EXPAND_LIMITS.callsPerRound, 1, 1000),
      bytesPerAnswer: int('EXPAND_BYTES_PER_ANSWER', DEFAULT_EXPAND_LIMITS.bytesPerAnswer, 1024),
    },
    rewritePaybackTurns: int('REWRITE_PAYBACK_TURNS', DEFAULT_PAYBACK_TURNS, 0, 100),
    turnCacheMb: int('TURN_CACHE_MB', 64, 0, 65536),
    storeMaxMbPerTenant: int('STORE_MAX_MB_PER_TENANT', 256, 1, 1_048_576),
    writeBehindMaxMb: int('WRITE_BEHIND_MAX_MB', 128, 1, 1_048_576),
    compressionSlots: int('COMPRESSION_SLOTS', 0, 0, 1_000_000) || undefined,
    requireTenantKey: oneOf('REQUIRE_TENANT_KEY', ['true', 'false'] as const, 'false') === 'true',
    tenantLabelCap: int('TENANT_LABEL_CAP', 50, 1, 10_000),
    replicaId: src.REPLICA_ID || undefined,
    model: readModelEnv(src, problems),
    prices: readPriceTable(src, problems),
    cloud: readCloudEnv(src, problems),
  };
  if (problems.length) throw new EnvError(problems);
  return env;
}
