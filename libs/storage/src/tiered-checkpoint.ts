// The tiered store's reads of the durable checkpoint: what it holds beyond the hot snapshot (with
// the writes still queued for it counted in), and putting that back into the snapshot and into hot.
import type { HotStore, SessionSnapshot } from '@context-guru/components';
import type { Checkpoint, DurableStore } from './sql/durable.store';
import { knowsNothing, missingFromSnapshot } from './tiered-snapshot';
import { errorText, type StorageLogger } from './storage-logger';
import type { WriteBehindQueue } from './write-behind.queue';

export interface CheckpointReader {
  readonly hot: HotStore;
  readonly durable: DurableStore;
  readonly queue: WriteBehindQueue;
  readonly log: StorageLogger;
}

function emptySnapshot(): SessionSnapshot {
  return { frozen: new Map(), lost: new Set(), kept: new Set() };
}

/** The checkpoint with the writes still queued for it; `contentKeys` undefined: every slot. */
export async function checkpointOf(
  r: CheckpointReader,
  tenant: string,
  session: string,
  kept: readonly string[],
  contentKeys: readonly string[] | undefined,
): Promise<Checkpoint> {
  const cp = await r.durable.loadCheckpoint(tenant, session, contentKeys ?? kept, contentKeys === undefined);
  const gap = missingFromSnapshot(cp, r.queue.pendingCheckpoint(tenant, session), contentKeys, emptySnapshot());
  if (!gap) return cp;
  return { frozen: gap.frozen, offloaded: gap.offloaded, kept: new Set(gap.kept), ...(gap.arm && { arm: gap.arm }) };
}

/** The checkpoint (or a write still queued for it) holds a decision or kept mark for one of `keys`. */
export async function checkpointKnows(r: CheckpointReader, tenant: string, session: string, keys: readonly string[]): Promise<boolean> {
  try {
    const cp = await r.durable.loadCheckpoint(tenant, session, keys);
    const gap = missingFromSnapshot(cp, r.queue.pendingCheckpoint(tenant, session), keys, emptySnapshot());
    return gap !== null && (gap.frozen.size > 0 || gap.kept.length > 0);
  } catch (err) {
    // As loadSession's repair: without the checkpoint's word, the hot store's is served.
    r.log.warn('checkpoint lookup failed; serving the hot snapshot', { err: errorText(err) });
    return false;
  }
}

/**
 * Restores checkpointed decisions the hot store lacks, into the snapshot and back into hot.
 * Resolves with how many slots vanished without a trace (counted as dropped and repaired at once).
 */
export async function repairFromCheckpoint(
  r: CheckpointReader,
  tenant: string,
  session: string,
  contentKeys: readonly string[],
  snap: SessionSnapshot,
): Promise<number> {
  // A session the hot store knows nothing of comes back whole: re-warmed with only the keys
  // asked here, it would read as flagged and complete to a replica asking about another key
  // (text a Reformat rewrote, which that replica never learned), and its checkpoint unread.
  const whole = knowsNothing(snap);
  const cp = await r.durable.loadCheckpoint(tenant, session, contentKeys, whole);
  const gap = missingFromSnapshot(cp, r.queue.pendingCheckpoint(tenant, session), whole ? undefined : contentKeys, snap);
  if (!gap) return 0;
  let restored = 0;
  for (const [slot, rep] of gap.frozen) {
    snap.frozen.set(slot, rep);
    // A slot the hot store reported lost is repaired by the re-put below (it counts that);
    // a slot that vanished without a trace is counted here, as dropped and repaired at once.
    if (!snap.lost.delete(slot)) restored++;
  }
  if (gap.offloaded) snap.offloaded = true;
  if (gap.arm) snap.arm = gap.arm;
  for (const ck of gap.kept) snap.kept.add(ck);
  try {
    if (gap.frozen.size > 0 || gap.offloaded || gap.arm) {
      await r.hot.commitSession(tenant, session, { frozen: gap.frozen, offloaded: gap.offloaded, arm: gap.arm });
    }
    if (gap.kept.length > 0) await r.hot.markKept(tenant, gap.kept);
  } catch (err) {
    r.log.warn('re-warming the hot store failed', { err: errorText(err) });
  }
  return restored;
}
