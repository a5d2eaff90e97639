// Row shapes the durable store shares with the sealing of its rows (crypto/sealed-rows.ts) and its
// statement modules (turn-writes.ts), kept apart from the store so they do not import each other.
import type { TurnRecord } from '@context-guru/components';

/** One original as archived: the text a marker points at, by tenant, session and id. */
export interface ArchivedStash {
  tenant: string;
  session: string;
  id: string;
  text: string;
}

/** A turn record to persist: a new turn (`turn`), its rewrites, or both. */
export interface TurnWrite {
  tenant: string;
  session: string;
  turn?: TurnRecord;
  rewritten?: readonly number[];
  /** With rewrites only: the `at` of the turn they belong to (a later turn's row is left alone). */
  at?: number;
}
