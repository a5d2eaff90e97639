// The statements that write turn records (session_turn, partitioned by the day a row is written):
// a session has one row per day it was written on, so an upsert only meets that day's row, and
// readers (session-lookups.ts) take the newest turn and the longest TTL of all of them.
import type { TurnRecord } from '@context-guru/components';
import type { TurnWrite } from './durable.types';
import type { SqlQueryable } from './sql-client';
import { utcDay } from './stash-bytes';

const list = (r: readonly number[] | undefined) => (r ? r.join(',') : null);

/** Full turns (a row replaced, rewrites reset to what it carries) and rewrites of rows already there. */
export async function writeTurns(
  c: SqlQueryable,
  full: ReadonlyArray<TurnWrite & { turn: TurnRecord }>,
  partial: ReadonlyArray<TurnWrite & { rewritten: readonly number[]; at: number }>,
  at: Date,
): Promise<void> {
  if (full.length > 0) {
    await c.query(
      // One row per session and day; readers take the newest turn and the longest TTL of all rows.
      `INSERT INTO session_turn (tenant, session, n, at_ms, ttl_ms, rewritten, updated_at, day)
       SELECT t, s, n, a, l, r, $7, $8::date FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[], $5::bigint[], $6::text[]) AS b(t, s, n, a, l, r)
       ON CONFLICT (tenant, session, day) DO UPDATE
         SET n = EXCLUDED.n, at_ms = EXCLUDED.at_ms, ttl_ms = GREATEST(session_turn.ttl_ms, EXCLUDED.ttl_ms),
             rewritten = EXCLUDED.rewritten, updated_at = EXCLUDED.updated_at
         -- Replicas flush behind independently: an older turn arriving late never wins.
         WHERE EXCLUDED.at_ms >= session_turn.at_ms`,
      [
        full.map((w) => w.tenant),
        full.map((w) => w.session),
        full.map((w) => w.turn.n),
        full.map((w) => w.turn.at),
        full.map((w) => w.turn.ttlMs),
        full.map((w) => list(w.rewritten ?? [])),
        at,
        utcDay(at.getTime()),
      ],
    );
  }
  if (partial.length > 0) {
    await c.query(
      `UPDATE session_turn AS st SET rewritten = b.r, updated_at = $5
       FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS b(t, s, r, a)
       WHERE st.tenant = b.t AND st.session = b.s AND st.at_ms = b.a`,
      [partial.map((w) => w.tenant), partial.map((w) => w.session), partial.map((w) => list(w.rewritten)), partial.map((w) => w.at), at],
    );
  }
}

/**
 * The durable advanceTurn: locks the newest row, records the new turn with the longest TTL asked
 * so far, and returns the newest row's turn ($1 tenant, $2 session, $3 n, $4 at, $5 ttl, $6 the
 * retention cutoff, $7 now, $8 today).
 */
export const ADVANCE_TURN = `WITH prev AS (
       SELECT n, at_ms, ttl_ms, rewritten FROM session_turn WHERE tenant = $1 AND session = $2 AND updated_at > $6
        ORDER BY at_ms DESC LIMIT 1 FOR UPDATE
     ), longest AS (
       SELECT coalesce(max(ttl_ms), 0) AS l FROM session_turn WHERE tenant = $1 AND session = $2 AND updated_at > $6
     ), up AS (
       INSERT INTO session_turn (tenant, session, n, at_ms, ttl_ms, rewritten, updated_at, day)
       SELECT $1, $2, $3, $4, GREATEST($5::bigint, l), '', $7, $8::date FROM longest
       ON CONFLICT (tenant, session, day) DO UPDATE
         SET n = EXCLUDED.n, at_ms = EXCLUDED.at_ms, ttl_ms = GREATEST(session_turn.ttl_ms, EXCLUDED.ttl_ms),
             rewritten = EXCLUDED.rewritten, updated_at = EXCLUDED.updated_at
         WHERE EXCLUDED.at_ms >= session_turn.at_ms
     )
     SELECT n, at_ms, GREATEST(ttl_ms, l) AS ttl_ms, rewritten FROM prev, longest`;
