// Per-session decisions, prefetched in one round trip before the pipeline runs and written back
// in one batch after it, so components stay synchronous over plain data on the hot path.

/**
 * The measured-savings arm of a session (holdout.ts in the gateway): `holdout` sessions are
 * forwarded untouched for their whole life. Recorded at the session's first sight and never changed.
 */
export type Arm = 'treated' | 'holdout';
export const ARMS: readonly Arm[] = ['treated', 'holdout'];

export interface FrozenKey {
  component: string;
  contentKey: string;
}

/** What components see of the session store during one run. */
export interface SessionView {
  /** The frozen replacement of a content item by a component, if any. */
  frozen(component: string, contentKey: string): string | undefined;
  /** A decision that was frozen earlier and has since been lost (evicted or expired). */
  frozenLost(component: string, contentKey: string): boolean;
  /** Content the model asked back for: never reduce it again. */
  keptVerbatim(contentKey: string): boolean;
  /** Record a new decision so later turns replay it byte-identically. */
  freeze(component: string, contentKey: string, replacement: string): void;
  /** Count a replay hit / miss (for freeze-health stats). */
  countReplay(hit: boolean): void;
}

export interface SessionSnapshot {
  /** slot (`component:contentKey`) → replacement. */
  frozen: Map<string, string>;
  /** Slots that were frozen once and have since been lost. */
  lost: Set<string>;
  /** Content keys kept verbatim after an expand. */
  kept: Set<string>;
  /** The session offers the expand tool (decided on its first turn, replayed on every later one). */
  offloaded?: boolean;
  /** The arm recorded at the session's first sight (absent: never recorded). */
  arm?: Arm;
  /**
   * The store refused this turn's new originals (the tenant's byte budget is spent): the turn runs
   * again with a stash that takes no new original, so no output is offloaded and no marker minted.
   */
  stashFull?: boolean;
}

/** Slot names handed out, per component then content key; dropped whole past SLOT_NAMES_MAX. */
const slotNames = new Map<string, Map<string, string>>();
let slotNamesHeld = 0;
const SLOT_NAMES_MAX = 200_000;

/**
 * `component:contentKey`. Every component asks it of every tool output on every turn; a new
 * concatenation is a new string whose hash the snapshot look-up computes again, so each name is
 * built once and handed out again (its hash then cached in the string).
 */
export function frozenSlot(component: string, contentKey: string): string {
  let byKey = slotNames.get(component);
  if (!byKey) slotNames.set(component, (byKey = new Map()));
  let slot = byKey.get(contentKey);
  if (slot === undefined) {
    if (slotNamesHeld >= SLOT_NAMES_MAX) {
      slotNames.clear();
      slotNames.set(component, (byKey = new Map()));
      slotNamesHeld = 0;
    }
    slot = `${component}:${contentKey}`;
    byKey.set(contentKey, slot);
    slotNamesHeld++;
  }
  return slot;
}

/** The in-run view over a prefetched snapshot; collects new freezes for the write-back. */
export class SnapshotSessionView implements SessionView {
  readonly newFrozen = new Map<string, string>();
  hits = 0;
  misses = 0;

  constructor(private readonly snap: SessionSnapshot = emptySnapshot()) {}

  frozen(component: string, contentKey: string): string | undefined {
    const slot = frozenSlot(component, contentKey);
    return this.newFrozen.get(slot) ?? this.snap.frozen.get(slot);
  }

  frozenLost(component: string, contentKey: string): boolean {
    return this.snap.lost.has(frozenSlot(component, contentKey));
  }

  keptVerbatim(contentKey: string): boolean {
    return this.snap.kept.has(contentKey);
  }

  freeze(component: string, contentKey: string, replacement: string): void {
    const slot = frozenSlot(component, contentKey);
    if (this.snap.frozen.get(slot) !== replacement) this.newFrozen.set(slot, replacement);
  }

  /** Forgets this run's new freezes whose replacement is one of `texts` (a rewrite put back). */
  unfreezeReplacements(texts: ReadonlySet<string>): void {
    for (const [slot, replacement] of this.newFrozen) if (texts.has(replacement)) this.newFrozen.delete(slot);
  }

  countReplay(hit: boolean): void {
    if (hit) this.hits++;
    else this.misses++;
  }
}

export function emptySnapshot(): SessionSnapshot {
  return { frozen: new Map(), lost: new Set(), kept: new Set() };
}
