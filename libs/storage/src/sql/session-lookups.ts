// First-sight look-ups of many sessions in one statement each: the turn record and the checkpoint
// (frozen slots, sticky flag and arm, kept marks) of every ask, answered in the asks' order.
// Each ask carries its ordinal through the statement, so asks for the same session, or for
// different tenants, never mix; every row is filtered exactly as a look-up of that ask alone.
import { itemAt, type Arm, type TurnRecord } from '@context-guru/components';
import { col, type Row, type SqlQueryable } from './sql-client';
import { storableText } from './storable-text';

export interface TurnAsk {
  tenant: string;
  session: string;
  /** Rows last written before this are past retention (taken when the look-up was asked). */
  cutoff: Date;
}

export interface CheckpointAsk extends TurnAsk {
  /** Only slots (and kept marks) of these content keys; omitted → every slot, no kept marks. */
  contentKeys?: readonly string[];
  /** Every slot of the session all the same (kept marks still only among `contentKeys`). */
  everySlot?: boolean;
}

export interface Checkpoint {
  frozen: Map<string, string>;
  offloaded: boolean;
  arm?: Arm;
  /** Kept-verbatim marks among the content keys asked for. */
  kept: Set<string>;
}

/**
 * Postgres text cannot hold a NUL or a lone surrogate, so such a key is in no row: it is answered
 * "nothing stored" here instead of failing the whole statement, and with it every other ask.
 */
const askable = (a: TurnAsk) => storableText(a.tenant) && storableText(a.session);

/** The asks that go into the statement (its ordinal k + 1 is q[k]), with their places among all asks. */
function queried<A extends TurnAsk>(asks: readonly A[]): Array<{ ask: A; at: number }> {
  return asks.flatMap((ask, at) => (askable(ask) ? [{ ask, at }] : []));
}

/** The place among all asks of the ask a row answers (its 1-based ordinal in the statement). */
const askOf = (q: ReadonlyArray<{ at: number }>, r: Row): number => itemAt(q, col.num(r, 'i') - 1, 'look-up ordinal').at;

export async function loadTurns(sql: SqlQueryable, asks: readonly TurnAsk[]): Promise<Array<TurnRecord | null>> {
  const out: Array<TurnRecord | null> = asks.map(() => null);
  const q = queried(asks);
  if (q.length === 0) return out;
  const rows = await sql.query(
    // A session has a row per day it was written on: the newest turn wins (as a late older one
    // never overwrote a newer one in a single row), and the TTL is the longest any row asked for.
    `SELECT DISTINCT ON (b.i) b.i, st.n, st.at_ms, max(st.ttl_ms) OVER (PARTITION BY b.i) AS ttl_ms, st.rewritten
       FROM unnest($1::text[], $2::text[], $3::timestamptz[]) WITH ORDINALITY AS b(t, s, c, i)
       JOIN session_turn st ON st.tenant = b.t AND st.session = b.s
      WHERE st.updated_at > b.c
      ORDER BY b.i, st.at_ms DESC, st.updated_at DESC`,
    [q.map((x) => x.ask.tenant), q.map((x) => x.ask.session), q.map((x) => x.ask.cutoff)],
  );
  for (const r of rows) out[askOf(q, r)] = turnOf(r);
  return out;
}

export function turnOf(r: Row): TurnRecord {
  const rewritten = r.rewritten === null || r.rewritten === undefined ? undefined : col.str(r, 'rewritten');
  return {
    n: col.num(r, 'n'),
    at: col.num(r, 'at_ms'),
    ttlMs: col.num(r, 'ttl_ms'),
    ...(rewritten === undefined ? {} : { rewritten: rewritten ? rewritten.split(',').map(Number) : [] }),
  };
}

export async function loadCheckpoints(sql: SqlQueryable, asks: readonly CheckpointAsk[]): Promise<Checkpoint[]> {
  const out: Checkpoint[] = asks.map(() => ({ frozen: new Map(), offloaded: false, kept: new Set() }));
  const q = queried(asks);
  if (q.length === 0) return out;
  // Wanted content keys as (ordinal, key) pairs: the asks' lists differ in length.
  const wantOrd: number[] = [];
  const wantKey: string[] = [];
  q.forEach((x, k) => {
    for (const key of x.ask.contentKeys ?? []) {
      if (!storableText(key)) continue;
      wantOrd.push(k + 1);
      wantKey.push(key);
    }
  });
  // No CTE, and the kept marks read their ask's tenant and cutoff by subscript: the statement
  // is planned for every call (unnamed), and on PGlite planning a join-heavy one costs more than
  // the look-up it batches. A slot written on several days has a row in each day's partition:
  // the newest day's is the last write.
  const rows = await sql.query(
    `(SELECT DISTINCT ON (b.i, cp.slot) b.i, 'f' AS k, cp.slot AS a, cp.replacement AS b
       FROM unnest($1::text[], $2::text[], $3::boolean[], $4::timestamptz[]) WITH ORDINALITY AS b(t, s, every, c, i)
       JOIN session_checkpoint cp ON cp.tenant = b.t AND cp.session = b.s
      WHERE cp.updated_at > b.c
        AND (b.every OR (b.i::int, substr(cp.slot, strpos(cp.slot, ':') + 1)) IN (SELECT * FROM unnest($5::int[], $6::text[])))
      ORDER BY b.i, cp.slot, cp.day DESC, cp.updated_at DESC)
     UNION ALL
     SELECT b.i, 's', st.arm, CASE WHEN st.offloaded THEN 'o' END
       FROM unnest($1::text[], $2::text[], $4::timestamptz[]) WITH ORDINALITY AS b(t, s, c, i)
       JOIN session_state st ON st.tenant = b.t AND st.session = b.s
      WHERE st.updated_at > b.c
     UNION ALL
     SELECT w.i, 'k', kp.content_key, NULL
       FROM unnest($5::int[], $6::text[]) AS w(i, ck)
       JOIN kept kp ON kp.tenant = ($1::text[])[w.i] AND kp.content_key = w.ck
      WHERE kp.created_at > ($4::timestamptz[])[w.i]`,
    [
      q.map((x) => x.ask.tenant),
      q.map((x) => x.ask.session),
      q.map((x) => x.ask.contentKeys === undefined || x.ask.everySlot === true),
      q.map((x) => x.ask.cutoff),
      wantOrd,
      wantKey,
    ],
  );
  for (const r of rows) addRow(itemAt(out, askOf(q, r), 'checkpoint of a look-up'), r);
  return out;
}

function addRow(cp: Checkpoint, r: Row): void {
  const k = col.str(r, 'k');
  if (k === 'f') cp.frozen.set(col.str(r, 'a'), col.str(r, 'b'));
  else if (k === 's') {
    if (r.b === 'o') cp.offloaded = true;
    if (r.a === 'treated' || r.a === 'holdout') cp.arm = r.a;
  } else cp.kept.add(col.str(r, 'a'));
}
