// Wires the gateway side of the control plane: the directory every request resolves through, and
// (when there is a database) the sync that keeps it at the control plane's generation, the Redis
// or in-process announcements that wake it, and the replica heartbeat. Without a database the
// directory serves the PRESET / CONFIG tenant alone and knows no keys.
import type { GenerationSource, RedisEndpoint, SqlClient } from '@context-guru/storage';
import { type Logger, type TenantRuntime } from '@context-guru/engine';
import type { GatewayMetrics } from '../observability/metrics';
import { ControlSync } from './control-sync';
import { RedisGenerationSource } from './redis-generation.source';
import { ReplicaHeartbeat, replicaId } from './replica-heartbeat';
import { TenantDirectory } from './tenant-directory';
import { recordControl, recordRevocations } from '../observability/metrics-record';

export interface TenancyOptions {
  fallback: TenantRuntime;
  requireKey: boolean;
  sql?: SqlClient;
  /** Announcements: the embedded process's in-process bus, and/or Redis. */
  source?: GenerationSource;
  redis?: { url: RedisEndpoint; prefix?: string };
  replicaId?: string;
  log: Logger;
  metrics: GatewayMetrics;
}

export interface Tenancy {
  directory: TenantDirectory;
  sync?: ControlSync;
  heartbeat?: ReplicaHeartbeat;
  close(): Promise<void>;
}

export async function createTenancy(o: TenancyOptions): Promise<Tenancy> {
  const directory = new TenantDirectory({ fallback: o.fallback, requireKey: o.requireKey });
  if (!o.sql) return { directory, close: async () => undefined };
  const sources: GenerationSource[] = o.source ? [o.source] : [];
  const redis = o.redis ? new RedisGenerationSource({ ...o.redis, log: o.log }) : undefined;
  if (redis) {
    await redis.start();
    sources.push(redis);
  }
  const sync = new ControlSync({
    sql: o.sql,
    directory,
    fallback: o.fallback,
    sources,
    log: o.log,
    onApplied: (generation, propagationMs) => {
      recordControl(o.metrics, generation, propagationMs, directory.versions());
      recordRevocations(o.metrics, directory.drainRevocations());
    },
  });
  await sync.start();
  const heartbeat = new ReplicaHeartbeat(o.replicaId ?? replicaId(), { sql: o.sql, sync, directory, log: o.log });
  heartbeat.start();
  return {
    directory,
    sync,
    heartbeat,
    async close() {
      await sync.close();
      await heartbeat.close();
      await redis?.close();
    },
  };
}
