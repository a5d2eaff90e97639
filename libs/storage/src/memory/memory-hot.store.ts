// The embedded hot store: one sliding-TTL LRU per tenant (a shared LRU would let one tenant evict
// another's frozen decisions), frozen decisions pinned, and every lost pin remembered until repaired.
import type { HotStore, SessionSnapshot, SessionWrites, StashEntry, StoreHealth, TurnRecord } from '@context-guru/components';
import { StorageError } from '../storage-errors';
import { LostSet } from './lost-set';
import { SessionStamps } from './session-stamps';
import { TtlLruCache, type RemovalReason } from './ttl-lru.cache';

export interface MemoryHotStoreOptions {
  /** Sliding TTL of every entry (default 10 000 s). */
  ttlSeconds?: number;
  /** Entries per tenant (default 10 000); pins are capped at half of it. */
  maxEntries?: number;
  /**
   * Bytes of originals and other text values per tenant (default unbounded): counted by entries
   * alone, 10 000 originals of a megabyte each were all kept. Unpinned entries go first.
   */
  maxBytes?: number;
  /** Injectable clock (epoch ms) so tests never sleep. */
  now?: () => number;
}

type Value = string | TurnRecord;

/** What a turn record is counted as against maxBytes (its fields are hashes and counters). */
const TURN_RECORD_BYTES = 256;

// Key layout inside a tenant's cache. NUL cannot occur in a session id, stash id or content key.
const SEP = '\u0000';
const K = {
  stash: (id: string) => `s${SEP}${id}`,
  own: (session: string, id: string) => `o${SEP}${session}${SEP}${id}`,
  frozen: (session: string, slot: string) => `f${SEP}${session}${SEP}${slot}`,
  kept: (contentKey: string) => `k${SEP}${contentKey}`,
  offloaded: (session: string) => `x${SEP}${session}`,
  arm: (session: string) => `a${SEP}${session}`,
  turn: (session: string) => `t${SEP}${session}`,
};

const KEPT_PREFIX = K.kept('');

/** The content key of a slot `component:contentKey`. */
export function slotContentKey(slot: string): string {
  return slot.slice(slot.indexOf(':') + 1);
}

/** A frozen slot as loadSession reads it: its cache key and content key, computed once. */
interface FrozenRef {
  key: string;
  contentKey: string;
}

class TenantState {
  readonly cache: TtlLruCache<Value>;
  readonly lost: LostSet;
  /** session → live frozen slots, so a snapshot never scans the whole cache. */
  readonly frozenIdx = new Map<string, Map<string, FrozenRef>>();
  /** Content keys with a kept mark in the cache, so a snapshot only reads the marks there are. */
  readonly keptIdx = new Set<string>();
  readonly stamps = new SessionStamps();

  constructor(ttlMs: number, maxEntries: number, maxBytes: number | undefined, now: () => number, onDropped: () => void) {
    // A lost mark dropped to bound the set changes what its session's snapshot says.
    this.lost = new LostSet(maxEntries, (session) => this.stamps.changed(session));
    this.cache = new TtlLruCache<Value>({
      ttlMs,
      maxEntries,
      maxBytes,
      // A JS string holds UTF-16 code units; a turn record is small beside the originals.
      sizeOf: (v) => (typeof v === 'string' ? v.length * 2 : TURN_RECORD_BYTES),
      now,
      onRemove: (key, _value, reason) => this.removed(key, reason, onDropped),
    });
  }

  indexFrozen(session: string, slot: string): void {
    let s = this.frozenIdx.get(session);
    if (!s) this.frozenIdx.set(session, (s = new Map()));
    if (!s.has(slot)) s.set(slot, { key: K.frozen(session, slot), contentKey: slotContentKey(slot) });
  }

  private removed(key: string, _reason: RemovalReason, onDropped: () => void): void {
    if (key.startsWith(KEPT_PREFIX)) {
      this.keptIdx.delete(key.slice(KEPT_PREFIX.length));
      this.stamps.keptChanged();
    }
    // The sticky flag, the arm and decisions are what a snapshot reports of its session.
    if (key.startsWith(`x${SEP}`) || key.startsWith(`a${SEP}`)) this.stamps.changed(key.slice(2));
    if (!key.startsWith(`f${SEP}`)) return;
    const [, session = '', slot = ''] = key.split(SEP);
    this.stamps.changed(session);
    const s = this.frozenIdx.get(session);
    s?.delete(slot);
    if (s && s.size === 0) this.frozenIdx.delete(session);
    this.lost.add(session, slot);
    onDropped();
  }
}

export class MemoryHotStore implements HotStore {
  readonly kind: string = 'memory';
  readonly persistent: boolean = true;
  private readonly tenants = new Map<string, TenantState>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly maxBytes: number | undefined;
  private readonly now: () => number;
  private dropped = 0;
  private repaired = 0;

  constructor(o: MemoryHotStoreOptions = {}) {
    this.ttlMs = (o.ttlSeconds ?? 10_000) * 1000;
    this.maxEntries = o.maxEntries ?? 10_000;
    this.maxBytes = o.maxBytes;
    this.now = o.now ?? Date.now;
    if (!(this.ttlMs > 0) || !(this.maxEntries > 0))
      throw new StorageError('invalid_store_config', 'MemoryHotStore: ttlSeconds and maxEntries must be > 0');
  }

  async putStash(tenant: string, session: string, entries: readonly StashEntry[]): Promise<void> {
    const t = this.tenant(tenant);
    for (const { id, text } of entries) {
      t.cache.set(K.stash(id), text);
      t.cache.set(K.own(session, id), '1');
    }
  }

  /** Warms a stash entry without an ownership record (the tiered store's archive fallback). */
  async warmStash(tenant: string, entries: readonly StashEntry[]): Promise<void> {
    const t = this.tenant(tenant);
    for (const { id, text } of entries) t.cache.set(K.stash(id), text);
  }

  async getStash(tenant: string, id: string): Promise<string | null> {
    const v = this.tenants.get(tenant)?.cache.get(K.stash(id));
    return typeof v === 'string' ? v : null;
  }

  async owns(tenant: string, session: string, id: string): Promise<boolean> {
    return this.tenants.get(tenant)?.cache.get(K.own(session, id)) !== undefined;
  }

  async loadSession(tenant: string, session: string, contentKeys: readonly string[]): Promise<SessionSnapshot> {
    const snap: SessionSnapshot = { frozen: new Map(), lost: new Set(), kept: new Set(), offloaded: false };
    const t = this.tenants.get(tenant);
    if (!t) return snap;
    const wanted = new Set(contentKeys);
    // Reading slides each decision's TTL; an expired one is removed here (from the index too,
    // which iteration allows) and lands in `lost`.
    for (const [slot, ref] of t.frozenIdx.get(session) ?? []) {
      if (!wanted.has(ref.contentKey)) continue;
      const v = t.cache.get(ref.key);
      if (typeof v === 'string') snap.frozen.set(slot, v);
    }
    for (const slot of t.lost.slots(session)) {
      if (wanted.has(slotContentKey(slot))) snap.lost.add(slot);
    }
    for (const ck of wanted) {
      if (t.keptIdx.has(ck) && t.cache.get(K.kept(ck)) !== undefined) snap.kept.add(ck);
    }
    snap.offloaded = t.cache.get(K.offloaded(session)) !== undefined;
    const arm = t.cache.get(K.arm(session));
    if (arm === 'treated' || arm === 'holdout') snap.arm = arm;
    return snap;
  }

  async commitSession(tenant: string, session: string, writes: SessionWrites): Promise<void> {
    if (writes.frozen.size === 0 && !writes.offloaded && !writes.arm) return;
    const t = this.tenant(tenant);
    t.stamps.changed(session);
    // The first arm recorded stays: a session never switches arm.
    if (writes.arm && t.cache.get(K.arm(session)) === undefined) t.cache.set(K.arm(session), writes.arm, true);
    for (const [slot, replacement] of writes.frozen) {
      t.indexFrozen(session, slot);
      t.cache.set(K.frozen(session, slot), replacement, true);
      if (t.lost.remove(session, slot)) this.repaired++;
    }
    // Sticky: a session that offloaded keeps the expand tool (a tools change would flip the cache).
    if (writes.offloaded) t.cache.set(K.offloaded(session), '1', true);
  }

  async markKept(tenant: string, contentKeys: readonly string[]): Promise<void> {
    if (contentKeys.length === 0) return;
    const t = this.tenant(tenant);
    t.stamps.keptChanged();
    for (const ck of contentKeys) {
      t.cache.set(K.kept(ck), '1');
      t.keptIdx.add(ck);
    }
  }

  /** See SessionStamps; undefined for a tenant this store holds nothing for. */
  sessionStamp(tenant: string, session: string): number | undefined {
    return this.tenants.get(tenant)?.stamps.of(session);
  }

  async advanceTurn(tenant: string, session: string, turn: TurnRecord): Promise<TurnRecord | null> {
    // Single-threaded: no await between the read and the write, so this is atomic.
    const t = this.tenant(tenant);
    const key = K.turn(session);
    const prev = t.cache.get(key);
    const previous = prev !== undefined && typeof prev !== 'string' ? prev : null;
    const ttlMs = Math.max(turn.ttlMs, previous?.ttlMs ?? 0);
    t.cache.set(key, { n: turn.n, at: turn.at, ttlMs, rewritten: [] }, true);
    return previous ? { ...previous, rewritten: [...(previous.rewritten ?? [])] } : null;
  }

  async hasTurn(tenant: string, session: string): Promise<boolean> {
    const rec = this.tenants.get(tenant)?.cache.get(K.turn(session));
    return rec !== undefined && typeof rec !== 'string';
  }

  async recordRewrites(tenant: string, session: string, rewritten: readonly number[]): Promise<void> {
    const t = this.tenant(tenant);
    const key = K.turn(session);
    const rec = t.cache.get(key);
    if (rec !== undefined && typeof rec !== 'string') t.cache.set(key, { ...rec, rewritten: [...rewritten] }, true);
  }

  async eraseTenant(tenant: string): Promise<void> {
    const t = this.tenants.get(tenant);
    if (!t) return;
    t.cache.clear();
    t.lost.clear();
    t.keptIdx.clear();
    this.tenants.delete(tenant);
  }

  async eraseSession(tenant: string, session: string): Promise<void> {
    const t = this.tenants.get(tenant);
    if (!t) return;
    const own = K.own(session, '');
    // Turn records live under the conversation key: the session, or `${session}#${alias}`.
    const exact = new Set([K.offloaded(session), K.arm(session), K.turn(session)]);
    const prefixes = [K.frozen(session, ''), `${K.turn(session)}#`];
    for (const key of t.cache.keys()) {
      if (key.startsWith(own)) {
        t.cache.delete(K.stash(key.slice(own.length)));
        t.cache.delete(key);
      } else if (exact.has(key) || prefixes.some((p) => key.startsWith(p))) t.cache.delete(key);
    }
    t.stamps.changed(session);
  }

  health(): StoreHealth {
    return { frozenDropped: this.dropped, frozenRepaired: this.repaired };
  }

  /** Diagnostics for one tenant: live entries, live pins, outstanding lost marks. */
  stats(tenant: string): { entries: number; pinned: number; lostMarks: number } {
    const t = this.tenants.get(tenant);
    return { entries: t?.cache.size ?? 0, pinned: t?.cache.pinnedCount ?? 0, lostMarks: t?.lost.size ?? 0 };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    for (const t of this.tenants.values()) {
      t.cache.clear();
      t.lost.clear();
      t.keptIdx.clear();
    }
    this.tenants.clear();
  }

  private tenant(tenant: string): TenantState {
    let t = this.tenants.get(tenant);
    if (!t) {
      t = new TenantState(this.ttlMs, this.maxEntries, this.maxBytes, this.now, () => this.dropped++);
      this.tenants.set(tenant, t);
    }
    return t;
  }
}
