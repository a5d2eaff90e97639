// The retention purge: every durable row past retention goes, table by table, in batches, by one
// replica at a time. Each batch is a transaction of its own that first tries a transaction-level
// advisory lock: a replica that finds it taken stops (another one is purging), so every replica
// may run the timer and the work is still done once; no batch holds row locks or a long
// snapshot (the path that bloats a table), and the lock survives a transaction-pooling PgBouncer.
import { col, type SqlClient } from './sql-client';

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

/** First key of the purge's advisory lock ("cg" as in the migrations' lock, then "purge"). */
const LOCK: readonly [number, number] = [0x6367, 0x7075];
/** Rows per DELETE: small enough for a short transaction, large enough to keep up. */
const BATCH = 5000;
/** A replica row this old belongs to a pod that died without removing it. */
const DEAD_REPLICA_MS = 86_400_000;

/** What each table drops, by the `$1` its clause compares with: `now`, or the retention cutoff. */
const POLICIES: ReadonlyArray<{ key: keyof PurgeResult; table: string; where: string; at: 'now' | 'cutoff' | 'deadReplica' }> = [
  { key: 'stashes', table: 'stash_archive', where: 'expires_at <= $1', at: 'now' },
  // A bucket counts while a row archived that (UTC) day may live: until the cutoff's day.
  { key: 'stashBytes', table: 'stash_bytes', where: "day < ($1::timestamptz AT TIME ZONE 'UTC')::date", at: 'cutoff' },
  { key: 'ownership', table: 'ownership', where: 'created_at <= $1', at: 'cutoff' },
  { key: 'checkpoints', table: 'session_checkpoint', where: 'updated_at <= $1', at: 'cutoff' },
  { key: 'sessions', table: 'session_state', where: 'updated_at <= $1', at: 'cutoff' },
  { key: 'kept', table: 'kept', where: 'created_at <= $1', at: 'cutoff' },
  { key: 'turns', table: 'session_turn', where: 'updated_at <= $1', at: 'cutoff' },
  { key: 'replicas', table: 'gateway_replicas', where: 'heartbeat_at <= $1', at: 'deadReplica' },
  { key: 'revokedKeys', table: 'api_keys', where: 'revoked_at <= $1', at: 'cutoff' },
];

/**
 * Deletes archived originals expired by `now` and every other row last written before `cutoff`;
 * undefined when another replica holds the purge (this one did nothing).
 */
export async function purgeExpired(sql: SqlClient, now: Date, cutoff: Date, batch = BATCH): Promise<PurgeResult | undefined> {
  const at = { now, cutoff, deadReplica: new Date(now.getTime() - DEAD_REPLICA_MS) };
  const out: PurgeResult = {
    turns: 0,
    stashes: 0,
    stashBytes: 0,
    ownership: 0,
    checkpoints: 0,
    sessions: 0,
    kept: 0,
    replicas: 0,
    revokedKeys: 0,
  };
  for (const p of POLICIES) {
    for (;;) {
      const n = await sql.transaction(async (tx) => {
        const [lock] = await tx.query('SELECT pg_try_advisory_xact_lock($1, $2) AS got', [...LOCK]);
        if (lock?.got !== true) return undefined;
        const rows = await tx.query(
          `WITH d AS (DELETE FROM ${p.table} WHERE ctid IN (SELECT ctid FROM ${p.table} WHERE ${p.where} LIMIT ${batch}) RETURNING 1)
           SELECT count(*)::int AS n FROM d`,
          [at[p.at]],
        );
        return rows[0] ? col.num(rows[0], 'n') : 0;
      });
      if (n === undefined) return undefined;
      out[p.key] += n;
      if (n < batch) break;
    }
  }
  return out;
}
