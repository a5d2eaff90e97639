// The retention purge: every durable row past retention goes, table by table, each count returned.
import { col, type SqlQueryable } from './sql-client';

export interface PurgeResult {
  turns: number;
  stashes: number;
  ownership: number;
  checkpoints: number;
  sessions: number;
  kept: number;
}

/** Deletes archived originals expired by `now` and every other row last written before `cutoff`. */
export async function purgeExpired(sql: SqlQueryable, now: Date, cutoff: Date): Promise<PurgeResult> {
  const count = async (text: string, at: Date) =>
    (await sql.query(`WITH d AS (${text} RETURNING 1) SELECT count(*)::int AS n FROM d`, [at])).map((r) => col.num(r, 'n'))[0] ?? 0;
  return {
    stashes: await count('DELETE FROM stash_archive WHERE expires_at <= $1', now),
    ownership: await count('DELETE FROM ownership WHERE created_at <= $1', cutoff),
    checkpoints: await count('DELETE FROM session_checkpoint WHERE updated_at <= $1', cutoff),
    sessions: await count('DELETE FROM session_state WHERE updated_at <= $1', cutoff),
    kept: await count('DELETE FROM kept WHERE created_at <= $1', cutoff),
    turns: await count('DELETE FROM session_turn WHERE updated_at <= $1', cutoff),
  };
}
