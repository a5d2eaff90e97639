// A session's summary checkpoint, kept as a frozen decision so it lives wherever frozen decisions
// live (Redis, Postgres) and is read in the same prefetch. It names the span it covers by hash, so
// a rewritten history never gets a summary of something else.
import type { Message } from '../../component';
import type { SessionView } from '../../ports/session-state.port';
import { frozenMarkerId, type StashWriter } from '../../ports/stash.port';
import { markerIds } from '../../shared/marker';
import { spanHash, spanStashText } from './span';

const SUMMARIZE = 'summarize';

/**
 * The content key of the checkpoint slot (`summarize:summary-checkpoint`). A session has one; the
 * gateway must include this key in the session prefetch for the checkpoint to be found.
 */
export const SUMMARY_CHECKPOINT_KEY = 'summary-checkpoint';

export interface Checkpoint {
  v: 1;
  /** Hash of the covered messages [start, start + count). */
  spanHash: string;
  count: number;
  /** The model's summary alone (a roll-forward starts from it). */
  summary: string;
  /** The summary message's full text, replayed byte-identically. */
  text: string;
}

export function readCheckpoint(state: SessionView): Checkpoint | undefined {
  const raw = state.frozen(SUMMARIZE, SUMMARY_CHECKPOINT_KEY);
  if (raw === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    if (typeof v !== 'object' || v === null) return undefined;
    const c = v as Partial<Checkpoint>;
    if (
      c.v !== 1 ||
      typeof c.spanHash !== 'string' ||
      typeof c.count !== 'number' ||
      typeof c.summary !== 'string' ||
      typeof c.text !== 'string'
    ) {
      return undefined;
    }
    return c as Checkpoint;
  } catch {
    return undefined;
  }
}

export function writeCheckpoint(state: SessionView, cp: Checkpoint): void {
  state.freeze(SUMMARIZE, SUMMARY_CHECKPOINT_KEY, JSON.stringify(cp));
}

/**
 * The end of the span a checkpoint covers in this transcript, or null when it does not apply: the
 * covered messages changed, the cut no longer lands on an assistant turn, it would eat into the
 * kept tail, or its marker would not resolve to the same stash entry.
 */
export function coveredEnd(
  cp: Checkpoint,
  messages: readonly Message[],
  start: number,
  maxEnd: number,
  stash: Pick<StashWriter, 'idOf'>,
): number | null {
  const end = start + cp.count;
  if (cp.count < 1 || end > maxEnd || messages[end]?.role !== 'assistant') return null;
  if (spanHash(messages, start, end) !== cp.spanHash) return null;
  const ids = markerIds(cp.text);
  if (ids.length && frozenMarkerId(ids, spanStashText(messages, start, end), stash) === undefined) return null;
  return end;
}
