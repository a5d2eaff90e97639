// A pipeline run sees every frozen decision, lost mark and kept-verbatim mark the store holds for
// the content its components ask about — even content a Reformat rewrote first. Components are
// synchronous, so the store is prefetched; but `format` (or `toon`) hands later components text
// whose content key the gateway cannot compute up front, and a replay missed there would flip a
// cached message. So the run records every key asked for; the keys the prefetch missed are looked
// up inside the turn's guarded write (no extra round trip), and when the store knew something
// about them nothing was written and the pipeline runs again on the completed snapshot. Those keys are remembered for the session, so the extra run happens once per new content.
import {
  BufferedStash,
  SnapshotSessionView,
  type HotStore,
  type PipelineResult,
  type SessionSnapshot,
  type StashIdOf,
  deleteOldest,
} from '@context-guru/components';
import { knowsAnything } from '@context-guru/storage';

/** A session view that remembers every content key a component asked about. */
class RecordingSessionView extends SnapshotSessionView {
  readonly asked = new Set<string>();

  override frozen(component: string, contentKey: string): string | undefined {
    this.asked.add(contentKey);
    return super.frozen(component, contentKey);
  }

  override frozenLost(component: string, contentKey: string): boolean {
    this.asked.add(contentKey);
    return super.frozenLost(component, contentKey);
  }

  override keptVerbatim(contentKey: string): boolean {
    this.asked.add(contentKey);
    return super.keptVerbatim(contentKey);
  }
}

const MAX_SESSIONS = 10_000;
const MAX_KEYS_PER_SESSION = 50_000;

/**
 * Keys a session's components asked about beyond the message texts (bounded; one per gateway
 * context, scoped by tenant and session). Only a speed-up: a replica that never saw the session
 * learns them on its first run.
 */
export class LearnedKeys {
  private readonly sessions = new Map<string, Set<string>>();
  /** Changes whenever a key is learned or forgotten: a load that added these keys is then stale. */
  generation = 0;

  get(scope: string): readonly string[] {
    const keys = this.sessions.get(scope);
    if (!keys) return [];
    this.sessions.delete(scope);
    this.sessions.set(scope, keys);
    return [...keys];
  }

  add(scope: string, keys: readonly string[]): void {
    this.generation++;
    let set = this.sessions.get(scope);
    if (!set) {
      set = new Set();
      this.sessions.set(scope, set);
      if (this.sessions.size > MAX_SESSIONS) deleteOldest(this.sessions);
    }
    if (set.size + keys.length > MAX_KEYS_PER_SESSION) set.clear();
    for (const k of keys) set.add(k);
  }
}

export interface SessionRun {
  result: PipelineResult;
  state: RecordingSessionView;
  stash: BufferedStash;
  snapshot: SessionSnapshot;
  /** Pipeline runs this request needed (1 unless the prefetch missed something the store knew). */
  runs: number;
  /**
   * Keys this run asked about that no load fetched: what the turn's write is guarded on (empty
   * once MAX_RUNS runs were made: the last run stands).
   */
  unknown: string[];
  /** Every key looked up or learned so far, and the snapshot this run saw. */
  loaded: LoadedSession;
}

export interface SessionRunInput {
  store: HotStore;
  /** The tenant's originals may be kept (keepsOriginals): false runs every offloader markerless. */
  persistent: boolean;
  /** The tenant's marker ids (absent: the unkeyed library default). */
  idOf?: StashIdOf;
  tenant: string;
  session: string;
  /** Content keys of the messages as received. */
  keys: readonly string[];
  /** Runs the pipeline once over a fresh stash and session view. */
  run: (stash: BufferedStash, state: RecordingSessionView) => Promise<PipelineResult>;
  learned: LearnedKeys;
  /** The first load, started by the caller (beside its other reads) with `loadSessionFor`. */
  loaded?: LoadedSession;
}

export interface LoadedSession {
  asked: Set<string>;
  snapshot: SessionSnapshot;
}

/** The first session load of a run: the message keys plus those the session is known to ask. */
export async function loadSessionFor(
  i: Pick<SessionRunInput, 'store' | 'tenant' | 'session' | 'keys' | 'learned'>,
): Promise<LoadedSession> {
  const asked = new Set([...i.keys, ...i.learned.get(`${i.tenant}\u0000${i.session}`)]);
  return { asked, snapshot: await i.store.loadSession(i.tenant, i.session, [...asked]) };
}

const MAX_RUNS = 3;

function merge(a: SessionSnapshot, b: SessionSnapshot): SessionSnapshot {
  return {
    frozen: new Map([...a.frozen, ...b.frozen]),
    lost: new Set([...a.lost, ...b.lost]),
    kept: new Set([...a.kept, ...b.kept]),
    offloaded: a.offloaded === true || b.offloaded === true,
    ...((a.arm ?? b.arm) && { arm: a.arm ?? b.arm }),
    ...((a.stashFull === true || b.stashFull === true) && { stashFull: true }),
  };
}

async function runOnce(i: SessionRunInput, loaded: LoadedSession, runs: number): Promise<SessionRun> {
  const stash = new BufferedStash(i.persistent, i.idOf, loaded.snapshot.stashFull === true);
  const state = new RecordingSessionView(loaded.snapshot);
  const result = await i.run(stash, state);
  const missing = [...state.asked].filter((k) => !loaded.asked.has(k));
  for (const k of missing) loaded.asked.add(k);
  if (missing.length > 0) i.learned.add(`${i.tenant}\u0000${i.session}`, missing);
  return { result, state, stash, snapshot: loaded.snapshot, runs, unknown: runs >= MAX_RUNS ? [] : missing, loaded };
}

/** The request's first run, over its first load (started by the caller, or here). */
export async function firstRun(i: SessionRunInput): Promise<SessionRun> {
  return runOnce(i, await (i.loaded ?? loadSessionFor(i)), 1);
}

/** The next run, once the store said what it knew (`known`) about the previous run's unknown keys. */
export function rerun(i: SessionRunInput, prev: SessionRun, known: SessionSnapshot): Promise<SessionRun> {
  return runOnce(i, { asked: prev.loaded.asked, snapshot: merge(prev.snapshot, known) }, prev.runs + 1);
}

/**
 * For a store without a guarded write (in-process: a look-up costs no round trip), the missed
 * keys are looked up right away and the turn re-run before it is encoded, so it is encoded once.
 */
export async function settled(i: SessionRunInput, run: SessionRun): Promise<SessionRun> {
  while (run.unknown.length > 0) {
    const known = await i.store.loadSession(i.tenant, i.session, run.unknown);
    // Nothing stored under those keys: this run already saw the truth.
    if (!knowsAnything(known)) return { ...run, unknown: [] };
    run = await rerun(i, run, known);
  }
  return run;
}
