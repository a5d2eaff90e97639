// The hot store: everything a request needs on its path, namespaced by tenant. The memory adapter
// serves the laptop; the Redis adapter lets any number of replicas share one state. Every method
// is async from day one so adapters that cross the network plug in without touching the hot path.
import type { Arm, SessionSnapshot } from './session-state.port';
import type { StashEntry } from './stash.port';

/** What the previous turn of a session looked like, for the cache boundary and cold detection. */
export interface TurnRecord {
  /** Normalized message count forwarded on that turn. */
  n: number;
  /** Epoch ms of that turn. */
  at: number;
  /** Longest provider cache TTL (ms) the session has asked for so far. */
  ttlMs: number;
  /**
   * Normalized indices that turn's forwarded body rewrote (absent: unknown). The provider cached
   * exactly those bytes, so a later warm turn may change a cached message only where it did.
   */
  rewritten?: readonly number[];
}

export interface SessionWrites {
  /** New frozen decisions, slot (`component:contentKey`) → replacement text. */
  frozen: Map<string, string>;
  /** The session offers the expand tool (decided on its first turn): every later turn replays it. */
  offloaded: boolean;
  /** The session's arm, written at its first sight; a store keeps the first arm it holds (never overwritten). */
  arm?: Arm;
}

/** One turn's writes, issued together: the originals, the session's new state, the rewrites. */
export interface TurnWrites {
  /** Owner of the stash entries and the session state. */
  session: string;
  /** The conversation whose turn record the rewrites belong to. */
  conversation: string;
  stash: readonly StashEntry[];
  /** Absent: nothing to commit for the session. */
  writes?: SessionWrites;
  /** Absent: the turn rewrote nothing (the advance already cleared the record). */
  rewritten?: readonly number[];
  /**
   * Content keys the run asked about that no load fetched (text a Reformat rewrote). When the
   * store holds a decision, lost mark or kept mark for one of them, nothing is written and that
   * knowledge comes back, so the turn is run again on it instead of deciding the content anew.
   */
  unknown: readonly string[];
  /** The snapshot the run saw (a store that repairs from a checkpoint reads its flags). */
  seen: SessionSnapshot;
}

export interface StoreHealth {
  /** Pinned (frozen) entries removed by expiry or eviction. */
  frozenDropped: number;
  /** Lost frozen entries written again. */
  frozenRepaired: number;
  /** Turns whose new originals a tenant's byte budget refused, per tenant (absent: the store has no such budget). */
  stashRefused?: ReadonlyMap<string, number>;
}

export interface HotStore {
  readonly kind: string;
  /** False for a store that cannot keep anything: offloaders then emit no resolvable marker. */
  readonly persistent: boolean;
  /** Writes originals and the session's ownership records; resolves only once acknowledged. */
  putStash(tenant: string, session: string, entries: readonly StashEntry[]): Promise<void>;
  /** Reads an original and slides its TTL. */
  getStash(tenant: string, id: string): Promise<string | null>;
  /** Whether this session stashed that id (GET /expand is scoped by it). */
  owns(tenant: string, session: string, id: string): Promise<boolean>;
  /** Prefetches the frozen decisions, lost marks and kept-verbatim marks a run may consult. */
  loadSession(tenant: string, session: string, contentKeys: readonly string[]): Promise<SessionSnapshot>;
  commitSession(tenant: string, session: string, writes: SessionWrites): Promise<void>;
  /** Content the model expanded is never reduced again (tenant-wide, session-independent). */
  markKept(tenant: string, contentKeys: readonly string[]): Promise<void>;
  /** Atomically returns the previous turn (null when none) and records this one (rewrites reset). */
  advanceTurn(tenant: string, session: string, turn: TurnRecord): Promise<TurnRecord | null>;
  /**
   * Optional: whether the store holds a turn record for the conversation (read-only). The gateway
   * asks it once per conversation and process to find a session named before derived names were
   * keyed (docs/security.md); a store without it keys every session from the upgrade on.
   */
  hasTurn?(tenant: string, session: string): Promise<boolean>;
  /** Records which normalized indices the current turn's forwarded body rewrote. */
  recordRewrites(tenant: string, session: string, rewritten: readonly number[]): Promise<void>;
  /**
   * Optional: a turn's writes guarded by `w.unknown` in one round trip (absent: `commitTurn` in
   * @context-guru/storage does it with the methods above). Resolves null once written, or with what
   * the store knows about the unknown keys when it wrote nothing.
   */
  commitTurn?(tenant: string, w: TurnWrites): Promise<SessionSnapshot | null>;
  /**
   * Optional, for a store that can tell cheaply: a number that changes whenever anything
   * loadSession may answer for the session changes (never on a TTL slide). Read just before a
   * load, it lets the caller reuse that load's snapshot for the same keys while it holds.
   * Undefined (or absent): the store cannot vouch, and the caller loads.
   */
  sessionStamp?(tenant: string, session: string): number | undefined;
  /**
   * Optional (a store without it cannot erase: the admin refuses). Erasure (docs/security.md): everything kept for the tenant — originals, ownership records,
   * session state, turn records and kept marks — is deleted, in this store and any it writes to.
   */
  eraseTenant?(tenant: string): Promise<void>;
  /**
   * Erasure of one session (`${tenant}:${base}`): the originals it owns (also when another session
   * stashed the same bytes), its ownership records, frozen decisions, flags and turn records.
   */
  eraseSession?(tenant: string, session: string): Promise<void>;
  health(): StoreHealth;
  ping(): Promise<void>;
  close(): Promise<void>;
}
