// A turn's writes, guarded by the content keys its run could not ask for up front: a store with
// its own `commitTurn` does it in one round trip; any other does the same with its methods — the
// keys are looked up first, and the writes go out (together) only when the store knows nothing.
import type { HotStore, SessionSnapshot, TurnWrites } from '@context-guru/components';

/** The snapshot holds something a component would act on (a decision, a lost or a kept mark). */
export function knowsAnything(s: SessionSnapshot): boolean {
  return s.frozen.size > 0 || s.lost.size > 0 || s.kept.size > 0;
}

/** Null once written; otherwise what the store knows about `w.unknown`, and nothing was written. */
export function commitTurn(store: HotStore, tenant: string, w: TurnWrites): Promise<SessionSnapshot | null> {
  return store.commitTurn ? store.commitTurn(tenant, w) : commitTurnInParts(store, tenant, w);
}

export async function commitTurnInParts(store: HotStore, tenant: string, w: TurnWrites): Promise<SessionSnapshot | null> {
  if (w.unknown.length > 0) {
    const known = await store.loadSession(tenant, w.session, w.unknown);
    if (knowsAnything(known)) return known;
  }
  await writeTurn(store, tenant, w);
  return null;
}

/** The writes alone, issued in one burst (one round trip to a remote store). */
export async function writeTurn(store: HotStore, tenant: string, w: TurnWrites): Promise<void> {
  await Promise.all([
    w.stash.length > 0 ? store.putStash(tenant, w.session, w.stash) : undefined,
    w.writes ? store.commitSession(tenant, w.session, w.writes) : undefined,
    w.rewritten ? store.recordRewrites(tenant, w.conversation, w.rewritten) : undefined,
  ]);
}
