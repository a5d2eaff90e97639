// The retention purge: every row of a batched table past its horizon goes, table by table, in batches, by one
// replica at a time. Each batch is a transaction of its own that first tries a transaction-level
// advisory lock: a replica that finds it taken stops (another one is purging), so every replica
// may run the timer and the work is still done once; no batch holds row locks or a long
// snapshot (the path that bloats a table), and the lock survives a transaction-pooling PgBouncer.
import { BATCHED, emptyPurgeResult, type PurgeResult } from './retention-registry';
import { col, type SqlClient } from './sql-client';

export type { PurgeResult } from './retention-registry';

/** First key of the purge's advisory lock ("pu"rge); the second is the schema's, so schemas purge independently. */
const LOCK_CLASS = 0x7075;
/** Rows per DELETE: small enough for a short transaction, large enough to keep up. */
const BATCH = 5000;
/** A replica row this old belongs to a pod that died without removing it. */
const DEAD_REPLICA_MS = 86_400_000;

/**
 * Deletes the rows of every batched table (retention-registry.ts) past its horizon: `now`, the
 * retention cutoff, or a day of silence for replica rows; undefined when another replica holds the
 * purge (this one did nothing). The partitioned tables are bounded by partitions.ts instead.
 */
export async function purgeExpired(sql: SqlClient, now: Date, cutoff: Date, batch = BATCH): Promise<PurgeResult | undefined> {
  const at = { now, cutoff, deadReplica: new Date(now.getTime() - DEAD_REPLICA_MS) };
  const out = emptyPurgeResult();
  for (const p of BATCHED) {
    for (;;) {
      const n = await sql.transaction(async (tx) => {
        const [lock] = await tx.query('SELECT pg_try_advisory_xact_lock($1, hashtext(current_schema())) AS got', [LOCK_CLASS]);
        if (lock?.got !== true) return undefined;
        const rows = await tx.query(
          `WITH d AS (DELETE FROM ${p.table} WHERE ctid IN (SELECT ctid FROM ${p.table} WHERE ${p.where ?? `${p.column} <= $1`} LIMIT ${batch}) RETURNING 1)
           SELECT count(*)::int AS n FROM d`,
          [at[p.horizon]],
        );
        return rows[0] ? col.num(rows[0], 'n') : 0;
      });
      if (n === undefined) return undefined;
      out[p.counted] += n;
      if (n < batch) break;
    }
  }
  return out;
}
