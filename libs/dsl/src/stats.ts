// Process-level, bounded counters an operator reads from /stats: which output selectors no filter
// matched (so the next filter to write is obvious), and what each filter and family saved.
// Bounded by construction: memory never grows with traffic, only with the number of filters.

export interface SelectorMiss {
  selector: string;
  count: number;
}

/** Looks like an encoded blob or binary, not a command's first line: never worth a ledger slot. */
const BLOB_SHAPED = [
  /^data:[\w.+/-]+;base64,/i,
  /^[A-Za-z0-9+/_-]{40,}={0,2}$/,
  /^(iVBORw0KGgo|\/9j\/|R0lGOD|UklGR|JVBERi0)/,
  /^(\x89PNG|GIF8|\xff\xd8\xff|%PDF-)/,
  // eslint-disable-next-line no-control-regex -- control bytes are exactly what marks binary output
  /[\x00-\x08\x0e-\x1f\ufffd]/,
];

export function isBlobShaped(line: string): boolean {
  return BLOB_SHAPED.some((re) => re.test(line));
}

/** Cuts `s` to at most `maxBytes` UTF-8 bytes without splitting a code point. */
export function clipUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s, 'utf8') <= maxBytes) return s;
  let out = '';
  let bytes = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > maxBytes) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/**
 * Unmatched selectors: at most `maxDistinct` of them (first seen wins a slot; once full, only
 * selectors already held keep counting), each clipped to `maxBytes`. The same output re-sent on
 * later turns is counted once, through a bounded memory of recently seen content keys.
 */
export class SelectorMissLedger {
  private readonly counts = new Map<string, number>();
  private readonly seen = new Set<string>();

  constructor(
    readonly maxDistinct = 200,
    readonly maxBytes = 120,
    readonly maxSeen = 4096,
  ) {}

  /** Counts one miss; returns false when the selector was not recorded (blank, blob, full, repeat). */
  record(selector: string, contentKey?: string): boolean {
    const line = clipUtf8(selector.trim(), this.maxBytes);
    if (line === '' || isBlobShaped(line)) return false;
    if (contentKey !== undefined) {
      if (this.seen.has(contentKey)) return false;
      this.seen.add(contentKey);
      if (this.seen.size > this.maxSeen) deleteOldest(this.seen);
    }
    const n = this.counts.get(line);
    if (n === undefined && this.counts.size >= this.maxDistinct) return false;
    this.counts.set(line, (n ?? 0) + 1);
    return true;
  }

  /** The `n` most frequent misses, count descending, ties in first-seen order. */
  top(n = 20): SelectorMiss[] {
    return [...this.counts]
      .map(([selector, count], order) => ({ selector, count, order }))
      .sort((a, b) => b.count - a.count || a.order - b.order)
      .slice(0, n)
      .map(({ selector, count }) => ({ selector, count }));
  }

  get size(): number {
    return this.counts.size;
  }

  reset(): void {
    this.counts.clear();
    this.seen.clear();
  }
}

export interface ActCounts {
  acts: number;
  saved_tokens: number;
  /** Savings counted once per distinct stash key (a re-sent output is not saved twice). */
  saved_tokens_unique: number;
}

export interface ActSnapshot {
  filters: Record<string, ActCounts>;
  families: Record<string, ActCounts>;
}

/** Per-filter and per-family act counters; keys are filter and family names (bounded by config). */
export class FilterActStats {
  private readonly filters = new Map<string, ActCounts>();
  private readonly families = new Map<string, ActCounts>();
  private readonly keys = new Set<string>();

  constructor(readonly maxKeys = 65536) {}

  record(filter: string, family: string, savedTokens: number, stashKey?: string): void {
    const fresh = stashKey === undefined || !this.keys.has(stashKey);
    if (stashKey !== undefined && fresh) {
      this.keys.add(stashKey);
      if (this.keys.size > this.maxKeys) deleteOldest(this.keys);
    }
    for (const [map, name] of [
      [this.filters, filter],
      [this.families, family],
    ] as const) {
      const c = map.get(name) ?? { acts: 0, saved_tokens: 0, saved_tokens_unique: 0 };
      c.acts++;
      c.saved_tokens += savedTokens;
      if (fresh) c.saved_tokens_unique += savedTokens;
      map.set(name, c);
    }
  }

  snapshot(): ActSnapshot {
    const copy = (m: Map<string, ActCounts>) =>
      Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, { ...v }]));
    return { filters: copy(this.filters), families: copy(this.families) };
  }

  reset(): void {
    this.filters.clear();
    this.families.clear();
    this.keys.clear();
  }
}

/** Sets iterate in insertion order: dropping the first key is how these bounded sets make room. */
function deleteOldest(set: Set<string>): void {
  for (const k of set) {
    set.delete(k);
    return;
  }
}
