// Which stashed originals a scope (a component, a tenant) has already been credited for, so
// "unique" savings count each original once however many turns replay its decision. Bounded: a
// scope that passes the cap starts afresh (it then over-credits, never under-credits, once).
const SEEN_KEYS_CAP = 200_000;

export class KeyLedger {
  private readonly seen = new Map<string, Set<string>>();

  /** The share of `keys` this scope sees for the first time (1 when the report stashed nothing). */
  freshFraction(scope: string, keys: readonly string[]): number {
    if (keys.length === 0) return 1;
    let seen = this.seen.get(scope);
    if (!seen || seen.size > SEEN_KEYS_CAP) {
      seen = new Set();
      this.seen.set(scope, seen);
    }
    let fresh = 0;
    for (const k of keys) {
      if (!seen.has(k)) {
        seen.add(k);
        fresh++;
      }
    }
    return fresh / keys.length;
  }
}
