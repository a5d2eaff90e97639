// Everything the gateway's request path depends on, built once at boot from the parsed
// environment. Nest wires it into controllers; the hot path uses it as plain data.
import { loadTokenizer, REGISTRY, systemClock, type Clock, type HotStore } from '@context-guru/components';
import {
  EphemeralHotStore,
  createStores,
  TieredHotStore,
  type DurableStore,
  type KeyRing,
  type GenerationSource,
  type SchemaStatus,
  type Stores,
} from '@context-guru/storage';
import type { Env } from './env';
import type { ModelRuntime } from './model/http-model';
import { createModelRuntime } from './model/model-resolver';
import {
  createLogger,
  type Logger,
  createPriceTable,
  TurnCache,
  RepeatMemo,
  LearnedKeys,
  DEFAULT_TENANT,
  createTenantRuntime,
  loadConfigDocument,
} from '@context-guru/engine';
import { GatewayMetrics } from './observability/metrics';
import { UsageAccounting } from './observability/usage-accounting';
import { startTracing, type Tracing } from './observability/tracing';
import { UPSTREAM_CONNECTIONS, UpstreamClient } from './http/upstream.client';
import { BodySlots, CompressionGate } from './http/compression-gate';
import { createShadow, type Shadow } from './shadow/shadow.factory';
import type { Pressure } from './shadow/shadow-pressure';
import type { TenantResolver } from './tenancy/tenant-resolver';
import { createTenancy, type Tenancy } from './tenancy/tenancy.factory';
import { TenantStats } from './tenancy/tenant-stats';
import { HoldoutFigures } from './holdout/holdout-figures';
import { primeComponents } from './observability/metrics-record';
import { MemoryHoldoutLedger, SqlHoldoutLedger } from './holdout/holdout-ledger';

const VERSION = '0.1.0';

/**
 * The turn cache counts characters of the bodies it keeps; their parsed views and outputs cost
 * about four bytes per character on top, so the budget in MiB is divided accordingly.
 */
function turnCacheChars(mb: number): number {
  return Math.floor((mb * 1024 * 1024) / 4);
}

export interface GatewayContext {
  env: Env;
  clock: Clock;
  log: Logger;
  store: HotStore;
  tenants: TenantResolver;
  /** The control plane's side in this replica: propagation status, heartbeat (absent without a database). */
  tenancy: Tenancy;
  upstream: UpstreamClient;
  stats: TenantStats;
  metrics: GatewayMetrics;
  /** Provider-reported usage, billed cost and the money value of savings, per tenant. */
  usage: UsageAccounting;
  /** Measured savings: each session's billed cost by holdout arm and config version, shared by every replica. */
  holdout: HoldoutFigures;
  /** OpenTelemetry traces; null when off (no OTLP endpoint), and then the hot path does nothing. */
  tracing: Tracing | null;
  /** The compaction models' process-wide limiter, spend and connection pool. */
  models: ModelRuntime;
  turns: TurnCache;
  repeats: RepeatMemo;
  /** Content keys each session's components asked beyond its message texts (a re-run saver). */
  learned: LearnedKeys;
  /** Bounds the compression backlog; requests past it are shed (cg_shed_total). */
  compression: CompressionGate;
  /** Shadow evaluation of each tenant's candidate config version, off the hot path. */
  shadow: Shadow;
  /** Bounds the whole request bodies held in memory at once (see BodySlots). */
  bodies: BodySlots;
  /** The durable schema against this build, for readiness (undefined without a durable store). */
  schema(): Promise<SchemaStatus | undefined>;
  /** The durable store when there is one: the embedded process shares its SqlClient with the admin. */
  durable?: DurableStore;
  /** The stores' per-tenant keys (absent with a store given by the caller): the embedded admin keys its audit chain with them. */
  keys?: KeyRing;
  close(): Promise<void>;
}

export interface ContextOverrides {
  clock?: Clock;
  store?: HotStore;
  log?: Logger;
  /** In-process generation announcements (the embedded admin's bus); the tenancy subscriber reads it. */
  generations?: GenerationSource;
  /** Tracing to use instead of the one OTEL_* would start (null = off). */
  tracing?: Tracing | null;
  /**
   * What tells shadow evaluation the gateway is too busy (default: the compression gate and the
   * event loop's lag). A test of what shadow reports, not of when it sheds, passes one that never
   * is, so the machine's own load cannot drop every sampled request.
   */
  shadowPressure?: Pressure;
}

export async function createGatewayContext(env: Env, overrides: ContextOverrides = {}): Promise<GatewayContext> {
  const log = overrides.log ?? createLogger(env.logLevel);
  const document = loadConfigDocument(env.preset, env.config);
  const runtime = createTenantRuntime(DEFAULT_TENANT, document, 1);
  const metrics = new GatewayMetrics(VERSION, env.tenantLabelCap);
  primeComponents(metrics, REGISTRY);
  let stores: Stores | undefined;
  let store = overrides.store;
  if (!store && !runtime.built.store.enabled) {
    store = new EphemeralHotStore({ ttlSeconds: runtime.built.store.ttl_seconds, maxEntries: runtime.built.store.max_entries });
  }
  if (!store) {
    stores = await createStores({
      redisUrl: env.redisUrl,
      databaseUrl: env.databaseUrl,
      migrationDatabaseUrl: env.migrationDatabaseUrl,
      poolMax: env.pgPoolMax,
      dataDir: env.dataDir,
      ttlSeconds: runtime.built.store.ttl_seconds,
      maxEntries: runtime.built.store.max_entries,
      maxBytes: env.storeMaxMbPerTenant * 1024 * 1024,
      writeBehindMaxBytes: env.writeBehindMaxMb * 1024 * 1024,
      retentionDays: env.retentionDays,
      migrate: env.migrateOnBoot,
      hot: env.hotStore,
      durable: env.durableStore,
      redisPrefix: env.redisPrefix,
      encryption: env.encryption,
      onPurge: (result, err) => metrics.stores.purged(result, err !== undefined),
      log,
    });
    log.info('stores ready', { ...stores.kinds });
    store = stores.hot;
    const { durable } = stores;
    const tiered = store instanceof TieredHotStore ? store : undefined;
    if (durable) metrics.stores.watch({ kind: durable.kind, ping: () => durable.ping(), queue: () => tiered?.queueStats() });
  }
  metrics.configVersion.set({ tenant: runtime.id }, runtime.configVersion);
  const upstream = new UpstreamClient({
    headersTimeoutMs: env.upstreamHeaderTimeoutMs,
    idleTimeoutMs: env.upstreamIdleTimeoutMs,
    connectTimeoutMs: env.upstreamConnectTimeoutMs,
  });
  log.info('gateway configured', { pipeline: runtime.built.names, preset: runtime.built.preset, store: store.kind });
  const models = createModelRuntime(env.model);
  // The control plane lives in the durable database; without one there are no keyed tenants.
  const sql = stores?.durable?.sql;
  const tenancy = await createTenancy({
    fallback: runtime,
    requireKey: env.requireTenantKey,
    sql,
    source: overrides.generations,
    redis: env.redisUrl && sql ? { url: env.redisUrl, prefix: env.redisPrefix } : undefined,
    replicaId: env.replicaId,
    log,
    metrics,
  });
  // The o200k table loads on the first count (tokens.ts). A gateway that will count — a default
  // pipeline with components, or keyed tenants from a control plane — loads it before it serves.
  if (runtime.built.pipeline.components.length > 0 || sql) loadTokenizer();
  const tracing = overrides.tracing !== undefined ? overrides.tracing : startTracing(VERSION);
  const compression = new CompressionGate(env.compressionSlots);
  const shadow = createShadow({ gate: compression, metrics, log, sql, pressure: overrides.shadowPressure });
  const ledger = sql ? new SqlHoldoutLedger(sql, { log }) : new MemoryHoldoutLedger();
  const holdout = new HoldoutFigures(ledger, metrics, log);
  return {
    env,
    clock: overrides.clock ?? systemClock,
    log,
    store,
    tenants: tenancy.directory,
    tenancy,
    upstream,
    stats: new TenantStats(),
    metrics,
    usage: new UsageAccounting(metrics, createPriceTable(env.prices), (r, usd) => holdout.record(r, usd)),
    holdout,
    tracing,
    models,
    turns: new TurnCache(turnCacheChars(env.turnCacheMb)),
    repeats: new RepeatMemo(turnCacheChars(env.turnCacheMb)),
    learned: new LearnedKeys(),
    compression,
    bodies: new BodySlots(UPSTREAM_CONNECTIONS, env.bodySlotsPerClient),
    shadow,
    schema: async () => stores?.schema(),
    durable: stores?.durable,
    keys: stores?.keys,
    async close() {
      await tenancy.close();
      await shadow.close();
      compression.load.close();
      await tracing?.shutdown();
      await upstream.close();
      await models.dispatcher.close();
      await models.sandbox.close();
      await ledger.close();
      await stores?.close();
    },
  };
}
