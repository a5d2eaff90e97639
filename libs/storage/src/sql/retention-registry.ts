// Every table of the schema and how it stays bounded (docs/storage.md#retention): whole day
// partitions dropped, rows deleted in batches by a column against a horizon, or kept, with the
// reason. A table the migrations create and this registry does not name is reported by
// tablesWithoutPolicy (boot logs it; test/int/storage/retention-registry.test.ts fails on it).
import { col, type SqlQueryable } from './sql-client';

/** Rows a retention round removed, by table (the purge metric's `table` label). */
export interface PurgeResult {
  turns: number;
  stashes: number;
  /** Archive byte counters of days past retention (stash-bytes.ts). */
  stashBytes: number;
  ownership: number;
  checkpoints: number;
  sessions: number;
  kept: number;
  /** gateway_replicas rows of replicas silent for a day (a crashed pod's; a stopped one removes its own). */
  replicas: number;
  /** Tenant and admin keys revoked before the cutoff (replicas only ever read unrevoked keys). */
  revokedKeys: number;
}

export const emptyPurgeResult = (): PurgeResult => ({
  turns: 0,
  stashes: 0,
  stashBytes: 0,
  ownership: 0,
  checkpoints: 0,
  sessions: 0,
  kept: 0,
  replicas: 0,
  revokedKeys: 0,
});

/** The three horizons a batched delete compares its column with. */
type PurgeHorizon = 'now' | 'cutoff' | 'deadReplica';

export type RetentionPolicy =
  | {
      kind: 'partitions';
      /** The partition key, a UTC date. */
      column: string;
      /**
       * `expiry`: the day holds rows that expire on it (dropped once it has passed);
       * `written`: the day holds rows written on it (dropped once retention has passed since).
       */
      day: 'expiry' | 'written';
      /** The purge result (and metric label) its dropped rows are counted under. */
      counted: keyof PurgeResult;
    }
  | {
      kind: 'batched';
      column: string;
      horizon: PurgeHorizon;
      counted: keyof PurgeResult;
      /** The rows to delete, `$1` being the horizon (default: column <= $1). */
      where?: string;
    }
  | { kind: 'kept'; why: string };

export const RETENTION: Readonly<Record<string, RetentionPolicy>> = {
  stash_archive: { kind: 'partitions', column: 'expires_day', day: 'expiry', counted: 'stashes' },
  session_checkpoint: { kind: 'partitions', column: 'day', day: 'written', counted: 'checkpoints' },
  session_turn: { kind: 'partitions', column: 'day', day: 'written', counted: 'turns' },
  // A bucket counts while a row archived that (UTC) day may live: until the cutoff's day.
  stash_bytes: {
    kind: 'batched',
    column: 'day',
    horizon: 'cutoff',
    counted: 'stashBytes',
    where: "day < ($1::timestamptz AT TIME ZONE 'UTC')::date",
  },
  ownership: { kind: 'batched', column: 'created_at', horizon: 'cutoff', counted: 'ownership' },
  session_state: { kind: 'batched', column: 'updated_at', horizon: 'cutoff', counted: 'sessions' },
  kept: { kind: 'batched', column: 'created_at', horizon: 'cutoff', counted: 'kept' },
  gateway_replicas: { kind: 'batched', column: 'heartbeat_at', horizon: 'deadReplica', counted: 'replicas' },
  api_keys: { kind: 'batched', column: 'revoked_at', horizon: 'cutoff', counted: 'revokedKeys' },
  holdout_sessions: { kind: 'kept', why: 'bounded by its writer: the newest sessions of each version, the newest versions of each tenant' },
  shadow_tallies: { kind: 'kept', why: 'bounded by its writer: the 20 most recently updated version pairs of each tenant' },
  tenants: { kind: 'kept', why: 'control plane: one row per tenant, deleted only by an operator' },
  pipeline_configs: { kind: 'kept', why: 'rollback history the audit rows name; written only by people' },
  filter_sets: { kind: 'kept', why: 'rollback history the audit rows name; written only by people' },
  audit_log: { kind: 'kept', why: 'append-only hash chain anchored at its first row (docs/security.md#audit-chain); written by people' },
  audit_head: { kind: 'kept', why: 'one row: the head of the audit chain' },
  control_generation: { kind: 'kept', why: 'one row: the control-plane generation' },
  data_keys: { kind: 'kept', why: 'wrapped data keys: a version dropped would make what it sealed unreadable' },
  schema_migrations: { kind: 'kept', why: 'the migration ledger: one row per migration file' },
};

/** The partitioned tables, in registry order. */
export const PARTITIONED = Object.entries(RETENTION).flatMap(([table, p]) => (p.kind === 'partitions' ? [{ table, ...p }] : []));

/** The tables deleted from in batches, in registry order. */
export const BATCHED = Object.entries(RETENTION).flatMap(([table, p]) => (p.kind === 'batched' ? [{ table, ...p }] : []));

/**
 * Tables of the current schema (partitions excluded: they belong to their parent) that the
 * registry does not name, sorted. Empty when every table has a policy.
 */
export async function tablesWithoutPolicy(sql: SqlQueryable): Promise<string[]> {
  const rows = await sql.query(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
  );
  return rows.map((r) => col.str(r, 'relname')).filter((t) => !Object.hasOwn(RETENTION, t));
}
