// The turn rows this process last wrote, so a replayed turn whose row would only see its `at` move
// forward is not written again on every flush (a client re-sending one request 1,000 times a second
// made PGlite run a statement every 50 ms for nothing). Only where this process is the database's
// sole writer (PGlite): on a shared Postgres another replica may have written the row since, and
// the row this process remembers is not the one stored.
import { deleteOldest, sameList, type TurnRecord } from '@context-guru/components';
import type { TurnWrite } from './sql/durable.store';

/**
 * How far a stored `at` may lag the turn's. It is only read after the hot copy is lost, for the
 * cold reading, which allows 60 s past the TTL (COLD_MARGIN_MS in the gateway's cache view): a row
 * up to 5 s old can make a cache read cold 5 s early at worst, still 55 s past its TTL.
 * @internal exported for the tests that count the statements
 */
export const TURN_AT_SLACK_MS = 5_000;
const MAX_ROWS = 10_000;

interface Row {
  n: number;
  at: number;
  ttlMs: number;
  rewritten: readonly number[];
}

const keyOf = (w: TurnWrite) => `${w.tenant}\u0000${w.session}`;

/** Writing `turn` (with these rewrites) would leave `row` as it is but for an `at` less than the slack later. */
function onlySlides(row: Row, turn: TurnRecord, rewritten: readonly number[]): boolean {
  const later = turn.at - row.at;
  return turn.n === row.n && turn.ttlMs <= row.ttlMs && later >= 0 && later < TURN_AT_SLACK_MS && sameList(rewritten, row.rewritten);
}

export class TurnCoalescer {
  private readonly rows = new Map<string, Row>();
  /** Turns left out, by conversation: rewrites of theirs flushed later are checked against the row as stored. */
  private readonly skipped = new Map<string, TurnRecord>();

  /** The writes of a flush that change a row beyond sliding its `at` within the slack. */
  needed(batch: readonly TurnWrite[]): TurnWrite[] {
    const out: TurnWrite[] = [];
    for (const w of batch) {
      const key = keyOf(w);
      const row = this.rows.get(key);
      const skipped = this.skipped.get(key);
      if (w.turn) {
        if (row && onlySlides(row, w.turn, w.rewritten ?? [])) this.remember(this.skipped, key, w.turn);
        else out.push(w);
      } else if (row && skipped && w.rewritten && skipped.at === w.at) {
        // Rewrites of a turn left out: the stored row is the earlier turn's, so they are written
        // with the turn itself, unless they are that row's already.
        if (!sameList(w.rewritten, row.rewritten))
          out.push({ tenant: w.tenant, session: w.session, turn: skipped, rewritten: w.rewritten });
      } else out.push(w);
    }
    return out;
  }

  /** These writes are stored. */
  written(batch: readonly TurnWrite[]): void {
    for (const w of batch) {
      const key = keyOf(w);
      const row = this.rows.get(key);
      if (w.turn) {
        const ttlMs = Math.max(w.turn.ttlMs, row?.ttlMs ?? 0);
        this.remember(this.rows, key, { n: w.turn.n, at: w.turn.at, ttlMs, rewritten: w.rewritten ?? [] });
        this.skipped.delete(key);
      } else if (row && w.rewritten && row.at === w.at) row.rewritten = w.rewritten;
    }
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > MAX_ROWS) deleteOldest(map);
  }
}
