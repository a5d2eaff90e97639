// A sliding-TTL LRU where pinned entries escape recency eviction but never their deadline; every
// removal other than an overwrite or explicit delete is reported so callers can count lost pins.

export type RemovalReason = 'expired' | 'evicted';

/** The coarsest a slide gets (with a TTL of 1,000 s or more; a thousandth of a shorter one). */
const MAX_SLACK_MS = 1000;

interface Entry<V> {
  value: V;
  expiresAt: number;
  pinned: boolean;
  /** What `sizeOf` said of the value when it was written. */
  size: number;
}

export interface TtlLruCacheOptions<V> {
  ttlMs: number;
  maxEntries: number;
  /** Bytes of values held at most (by `sizeOf`); unpinned entries go, least recent first, past it. */
  maxBytes?: number;
  sizeOf?: (value: V) => number;
  now: () => number;
  onRemove?: (key: string, value: V, reason: RemovalReason) => void;
}

/**
 * Two recency-ordered maps (pinned, unpinned). The TTL is uniform and slides on every touch, so
 * within each map the least-recent entry is also the earliest to expire: both eviction rules
 * (expired first, then least-recent unpinned) only ever look at the two map heads — O(1).
 */
export class TtlLruCache<V> {
  private readonly pinned = new Map<string, Entry<V>>();
  private readonly unpinned = new Map<string, Entry<V>>();
  /** No entry expires before this (a lower bound: reads and overwrites only move deadlines later). */
  private nextExpiry = Infinity;
  readonly pinCap: number;
  private held = 0;
  private readonly maxBytes: number;
  private readonly sizeOf: (value: V) => number;
  /**
   * A touch within this long of the entry's last slide leaves it where it is: its deadline is then
   * at most this much earlier than an exact slide, and its recency as old. A replayed turn touches
   * the same few dozen keys many times a second, and every move is a delete and an insert.
   */
  private readonly slackMs: number;

  constructor(private readonly o: TtlLruCacheOptions<V>) {
    this.pinCap = Math.floor(o.maxEntries / 2);
    this.maxBytes = o.maxBytes ?? Infinity;
    this.sizeOf = o.sizeOf ?? (() => 0);
    this.slackMs = Math.min(MAX_SLACK_MS, o.ttlMs / 1000);
  }

  get size(): number {
    return this.pinned.size + this.unpinned.size;
  }

  /** Bytes of the values held, as `sizeOf` measures them. */
  get bytes(): number {
    return this.held;
  }

  get pinnedCount(): number {
    return this.pinned.size;
  }

  /** Reads a live entry, sliding its deadline and recency; an expired one is removed lazily. */
  get(key: string): V | undefined {
    // One look-up for the common miss in `pinned`: an entry knows which map holds it.
    const e = this.pinned.get(key) ?? this.unpinned.get(key);
    if (!e) return undefined;
    const map = e.pinned ? this.pinned : this.unpinned;
    const now = this.o.now();
    if (e.expiresAt <= now) {
      map.delete(key);
      this.held -= e.size;
      this.o.onRemove?.(key, e.value, 'expired');
      return undefined;
    }
    const expiresAt = now + this.o.ttlMs;
    if (expiresAt - e.expiresAt >= this.slackMs) {
      map.delete(key);
      e.expiresAt = expiresAt;
      map.set(key, e);
    }
    return e.value;
  }

  /** Whether a live entry exists, without touching it (tests and diagnostics). */
  peek(key: string): V | undefined {
    const e = this.pinned.get(key) ?? this.unpinned.get(key);
    return e && e.expiresAt > this.o.now() ? e.value : undefined;
  }

  isPinned(key: string): boolean {
    return this.pinned.has(key);
  }

  /**
   * Writes an entry. A pin is granted while fewer than floor(maxEntries/2) pins are live; over the
   * cap the entry is stored unpinned and may claim a pin on a later write once slots free.
   */
  set(key: string, value: V, pin = false): void {
    const now = this.o.now();
    this.sweepExpired(now);
    const held = this.pinned.get(key);
    const wasPinned = held !== undefined;
    // An overwrite (a replayed turn re-puts what it put) reuses the entry instead of allocating one.
    const e = held ?? this.unpinned.get(key);
    const pinned = pin && (wasPinned || this.pinned.size < this.pinCap);
    const expiresAt = now + this.o.ttlMs;
    const size = this.sizeOf(value);
    if (!e) {
      this.held += size;
      this.insert(key, { value, expiresAt, pinned, size }, now);
      return;
    }
    e.value = value;
    this.held += size - e.size;
    e.size = size;
    if (e.pinned === pinned && expiresAt - e.expiresAt < this.slackMs) {
      if (this.held > this.maxBytes) this.evict(now);
      return; // slid lately: stays put
    }
    (wasPinned ? this.pinned : this.unpinned).delete(key);
    e.expiresAt = expiresAt;
    e.pinned = pinned;
    this.insert(key, e, now);
  }

  /** Appends `e` as its map's most recent entry, then evicts what is over capacity. */
  private insert(key: string, e: Entry<V>, now: number): void {
    (e.pinned ? this.pinned : this.unpinned).set(key, e);
    if (e.expiresAt < this.nextExpiry) this.nextExpiry = e.expiresAt;
    this.evict(now);
  }

  delete(key: string): boolean {
    const e = this.pinned.get(key) ?? this.unpinned.get(key);
    if (!e) return false;
    this.held -= e.size;
    return this.pinned.delete(key) || this.unpinned.delete(key);
  }

  /** Every key held, expired or not (a snapshot: deleting while walking it is safe). */
  keys(): string[] {
    return [...this.pinned.keys(), ...this.unpinned.keys()];
  }

  clear(): void {
    this.pinned.clear();
    this.unpinned.clear();
    this.held = 0;
  }

  /**
   * Drops expired heads; uniform TTL means the expired entries are exactly a prefix of each map.
   * Nothing can have expired before the earliest deadline the last sweep left (every later write
   * sets a later one), so until then a write does not walk the maps at all.
   */
  private sweepExpired(now: number): void {
    if (now < this.nextExpiry) return;
    this.nextExpiry = Math.min(this.sweepMap(this.pinned, now), this.sweepMap(this.unpinned, now));
  }

  /** Sweeps one map; returns its earliest remaining deadline (Infinity when empty). */
  private sweepMap(map: Map<string, Entry<V>>, now: number): number {
    for (const [key, e] of map) {
      if (e.expiresAt > now) return e.expiresAt;
      map.delete(key);
      this.held -= e.size;
      this.o.onRemove?.(key, e.value, 'expired');
    }
    return Infinity;
  }

  private evict(now: number): void {
    while (this.size > this.o.maxEntries || this.held > this.maxBytes) {
      const p = head(this.pinned);
      const u = head(this.unpinned);
      const oldest = p && u ? (p[1].expiresAt <= u[1].expiresAt ? p : u) : (p ?? u);
      if (oldest && oldest[1].expiresAt <= now) {
        this.removeHead(oldest, 'expired');
      } else if (u) {
        this.removeHead(u, 'evicted');
      } else {
        return; // everything pinned: pins are never evicted by recency
      }
    }
  }

  private removeHead([key, e]: [string, Entry<V>], reason: RemovalReason): void {
    (e.pinned ? this.pinned : this.unpinned).delete(key);
    this.held -= e.size;
    this.o.onRemove?.(key, e.value, reason);
  }
}

function head<V>(map: Map<string, Entry<V>>): [string, Entry<V>] | undefined {
  const it = map.entries().next();
  return it.done ? undefined : it.value;
}
