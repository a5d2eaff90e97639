// What the tiered store computes about its two copies: the gap between a hot snapshot and the
// durable checkpoint, which hot answers stand alone, the newest turn record of several.
import { type Arm, type SessionSnapshot, type StashEntry, type TurnRecord } from '@context-guru/components';
import type { ArchivedStash, Checkpoint, CheckpointWrite } from './sql/durable.store';

/** The newest of some turn records (by start time). */
export function newest(turns: ReadonlyArray<TurnRecord | null | undefined>): TurnRecord | null {
  let best: TurnRecord | null = null;
  for (const t of turns) if (t && (!best || t.at > best.at)) best = t;
  return best;
}

/** A hot answer that knows the session and lost nothing of it: nothing to complete from the durable store. */
export function answersAlone(snap: SessionSnapshot): boolean {
  return snap.lost.size === 0 && (snap.frozen.size > 0 || snap.offloaded === true || snap.arm !== undefined);
}

/** The hot answer holds nothing of the session: new, or its hot state vanished without a trace. */
export function knowsNothing(snap: SessionSnapshot): boolean {
  return snap.lost.size === 0 && snap.frozen.size === 0 && snap.offloaded !== true && snap.arm === undefined;
}

export function archivedAs(tenant: string, session: string, entries: readonly StashEntry[]): ArchivedStash[] {
  return entries.map((e) => ({ tenant, session, id: e.id, text: e.text }));
}

/** What the durable checkpoint and the writes still queued hold that the hot snapshot lacks. */
interface SnapshotGap {
  frozen: Map<string, string>;
  offloaded: boolean;
  arm?: Arm;
  kept: string[];
}

/** The gap between the snapshot and the checkpoint (pending writes included), or null when there is none. */
export function missingFromSnapshot(
  cp: Checkpoint,
  pending: CheckpointWrite | undefined,
  /** undefined: every slot. */
  contentKeys: readonly string[] | undefined,
  snap: SessionSnapshot,
): SnapshotGap | null {
  const wanted = contentKeys && new Set(contentKeys);
  for (const [slot, r] of pending?.frozen ?? []) if (!wanted || wanted.has(slot.slice(slot.indexOf(':') + 1))) cp.frozen.set(slot, r);
  const frozen = new Map<string, string>();
  for (const [slot, r] of cp.frozen) if (!snap.frozen.has(slot)) frozen.set(slot, r);
  const offloaded = (cp.offloaded || pending?.offloaded === true) && !snap.offloaded;
  // The arm recorded first (pending writes are newer than the stored row) comes back as it was.
  const arm = snap.arm === undefined ? (cp.arm ?? pending?.arm) : undefined;
  const kept = [...cp.kept].filter((ck) => !snap.kept.has(ck));
  if (frozen.size === 0 && !offloaded && !arm && kept.length === 0) return null;
  return { frozen, offloaded, arm, kept };
}
