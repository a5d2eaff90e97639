// The archive's byte counters (migrations/0012_stash_budget.sql): every archive write counts the
// bytes of the rows it actually inserted (an ON CONFLICT re-archive adds nothing) into the
// tenant's bucket of the day, in the same statement; a tenant's usage is the sum of its buckets
// within retention. The budget check takes a per-tenant advisory lock for its transaction only,
// so two replicas admitting the same tenant serialize, and it works through a PgBouncer in
// transaction mode (no session lock, no named statement).
import type { ArchivedStash } from './durable.types';
import { col, type SqlClient, type SqlQueryable } from './sql-client';

/** First key of the budget's advisory lock ("cb"); the second is the tenant's hashtext. */
const LOCK_CLASS = 0x6362;

/** The UTC day of an instant, as the counters' `day` holds it. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** What one tenant's archive write added, and what its buckets held before it. */
export interface CountedWrite {
  added: number;
  before: number;
}

export interface ArchiveRows {
  /** Originals to insert (their text as stored: sealed). */
  stash: readonly ArchivedStash[];
  /** Ownership rows (tenant, session, id). */
  own: readonly ArchivedStash[];
  now: Date;
  expires: Date;
  /** utcDay of expires: the archive's partition key (migration 0013). */
  expiresDay: string;
  /** utcDay of now: the bucket the inserted bytes go to. */
  day: string;
  /** utcDay of the retention cutoff: the oldest bucket still counted. */
  fromDay: string;
}

/**
 * Inserts the originals and their ownership and counts the inserted bytes, in one statement. Per
 * tenant that gained bytes: what it gained and its usage before (the statement's snapshot does not
 * see its own counter update). Counter rows are written in tenant order so two replicas flushing
 * the same tenants lock them in the same order.
 */
async function insertCounted(c: SqlQueryable, r: ArchiveRows): Promise<Map<string, CountedWrite>> {
  const rows = await c.query(
    `WITH ins AS (
       -- Re-archived on a later day than an earlier copy: a new copy in that day's partition (a row
       -- never moves partitions; it is counted, as it takes space). Only rows inserted come back
       -- (RETURNING cannot read xmax of a partitioned table, so no upsert tells them apart).
       INSERT INTO stash_archive (tenant, id, text, created_at, expires_at, expires_day)
       SELECT t, i, x, $4, $5, $11::date FROM unnest($1::text[], $2::text[], $3::text[]) AS b(t, i, x)
       ON CONFLICT (tenant, id, expires_day) DO NOTHING
       RETURNING tenant, octet_length(text) AS n
     ), extended AS (
       -- On the day of an earlier copy: that copy lives on, to the later expiry (this statement's
       -- snapshot does not see the rows it inserts, so this touches only copies already there).
       UPDATE stash_archive AS sa SET expires_at = $5 FROM unnest($1::text[], $2::text[]) AS b(t, i)
        WHERE sa.tenant = b.t AND sa.id = b.i AND sa.expires_day = $11::date AND sa.expires_at < $5
     ), own AS (
       INSERT INTO ownership (tenant, session, id, created_at)
       SELECT t, s, i, $4 FROM unnest($6::text[], $7::text[], $8::text[]) AS o(t, s, i)
       ON CONFLICT (tenant, session, id) DO UPDATE SET created_at = EXCLUDED.created_at
     ), added AS (
       SELECT tenant, sum(n)::bigint AS n FROM ins GROUP BY tenant
     ), bump AS (
       INSERT INTO stash_bytes (tenant, day, bytes) SELECT tenant, $9::date, n FROM added ORDER BY tenant
       ON CONFLICT (tenant, day) DO UPDATE SET bytes = stash_bytes.bytes + EXCLUDED.bytes
     )
     SELECT a.tenant, a.n AS added,
       (SELECT COALESCE(sum(s.bytes), 0) FROM stash_bytes s WHERE s.tenant = a.tenant AND s.day >= $10::date)::bigint AS before
     FROM added a`,
    [
      r.stash.map((e) => e.tenant),
      r.stash.map((e) => e.id),
      r.stash.map((e) => e.text),
      r.now,
      r.expires,
      r.own.map((e) => e.tenant),
      r.own.map((e) => e.session),
      r.own.map((e) => e.id),
      r.day,
      r.fromDay,
      r.expiresDay,
    ],
  );
  return new Map(rows.map((row) => [col.str(row, 'tenant'), { added: col.num(row, 'added'), before: col.num(row, 'before') }]));
}

/** Thrown inside the budget's transaction to roll it back. */
class BudgetRefused extends Error {}

/**
 * The archive write in a transaction of its own; with `budget`, under the tenant's lock, and
 * rolled back (undefined comes back) when the bytes it adds take the tenant past `maxBytes`.
 */
export async function writeCounted(
  sql: SqlClient,
  rows: ArchiveRows,
  budget: { tenant: string; maxBytes: number } | undefined,
): Promise<Map<string, CountedWrite> | undefined> {
  try {
    return await sql.transaction(async (c) => {
      if (budget) await c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, budget.tenant]);
      const out = await insertCounted(c, rows);
      const t = budget && out.get(budget.tenant);
      if (budget && t && t.before + t.added > budget.maxBytes) throw new BudgetRefused('stash budget refused');
      return out;
    });
  } catch (err) {
    if (err instanceof BudgetRefused) return undefined;
    throw err;
  }
}

/** The tenant's archived bytes within retention (the sum of at most ~31 buckets). */
export async function tenantUsage(c: SqlQueryable, tenant: string, fromDay: string): Promise<number> {
  const rows = await c.query('SELECT COALESCE(sum(bytes), 0)::bigint AS n FROM stash_bytes WHERE tenant = $1 AND day >= $2::date', [
    tenant,
    fromDay,
  ]);
  return rows[0] ? col.num(rows[0], 'n') : 0;
}

/**
 * Deletes the session's originals (also those another session owns: erasure wins) and gives
 * their bytes back to the buckets they were counted in.
 */
export async function deleteSessionOriginals(c: SqlQueryable, tenant: string, session: string): Promise<void> {
  await c.query(
    `WITH d AS (
       DELETE FROM stash_archive WHERE tenant = $1 AND id IN (SELECT id FROM ownership WHERE tenant = $1 AND session = $2)
       RETURNING (created_at AT TIME ZONE 'UTC')::date AS day, octet_length(text) AS n
     ), freed AS (SELECT day, sum(n)::bigint AS n FROM d GROUP BY day)
     UPDATE stash_bytes AS sb SET bytes = GREATEST(0, sb.bytes - freed.n) FROM freed WHERE sb.tenant = $1 AND sb.day = freed.day`,
    [tenant, session],
  );
}
