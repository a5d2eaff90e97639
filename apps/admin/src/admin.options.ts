// What the admin needs from its host process: the composition entry (embedded) or main.ts
// (standalone) builds these and passes them in, so the admin never opens stores on its own terms.
import type { HotStore } from '@context-guru/components';
import type { AuditSealing, GenerationNotifier, SchemaStatus, SqlClient } from '@context-guru/storage';

export const ADMIN_DEPS = Symbol('ADMIN_DEPS');

export interface AdminLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * The gateway's in-process figures, handed over by the embedded composition entry: a standalone
 * admin has no gateway beside it (each replica serves its own /stats, Prometheus sums them).
 */
export interface GatewayStatsSource {
  /** Tenants with traffic in this process. */
  tenants(): string[];
  /** The tenant's /stats document. */
  snapshot(tenant: string): Promise<Record<string, unknown>>;
  /** Minute buckets, oldest first; `*` is the whole gateway. */
  minutes(tenant: string): unknown[];
  /** Recent sessions, most recently seen first. */
  recentSessions(): unknown[];
}

export interface AdminDeps {
  /** The control-plane database (migrated): Postgres, or the PGlite the gateway shares. */
  sql: SqlClient;
  /** Where stashed originals live (hot store fronting the archive), for ops expand. */
  store?: HotStore;
  /** Announces a committed generation (Redis publisher, in-process bus, or both). */
  notifier?: GenerationNotifier;
  /** Keys the audit chain and anchors its head outside the database (absent: plain SHA-256 chain). */
  audit?: AuditSealing;
  /** The bootstrap credential; acts as `admin`. */
  adminToken?: string;
  /** Failed authentications per client address per minute before it is throttled (default 20). */
  authFailuresPerMinute?: number;
  /** Ops expands an actor may do per minute (default 30). */
  opsExpandPerMinute?: number;
  /** Largest accepted body (default 8 MiB). */
  bodyLimitBytes?: number;
  /** The durable schema against this build; /readyz is false until it is ok (a separate runner migrates). */
  schema?: () => Promise<SchemaStatus | undefined>;
  log?: AdminLogger;
  /** Present only in the embedded process; GET /v1/stats answers stats_unavailable without it. */
  gatewayStats?: GatewayStatsSource;
}
