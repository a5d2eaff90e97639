// A token bucket per key (a tenant for /compact, a client address for failed admin logins): `perMinute`
// tokens, refilled continuously, so a burst of up to `perMinute` passes and then one per
// 60 / perMinute seconds. Buckets that have refilled are forgotten once there are many, so keys an
// attacker makes up (addresses) cannot grow the map without bound.

const PRUNE_ABOVE = 10_000;

/** Failed admin authentications per address per minute before it is throttled (ADMIN_AUTH_FAILURES_PER_MINUTE). */
export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 20;

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimit {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.perMs = perMinute / 60_000;
  }

  /** Seconds until `key` has a token again; 0 when it has one now. Takes nothing. */
  retryAfter(key: string): number {
    const tokens = this.refill(key).tokens;
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.perMs / 1000));
  }

  /** Takes a token for `key`: 0 when there was one, else the seconds until there is. */
  take(key: string): number {
    const wait = this.retryAfter(key);
    if (wait > 0) return wait;
    const b = this.refill(key);
    b.tokens -= 1;
    this.buckets.set(key, b);
    if (this.buckets.size > PRUNE_ABOVE) this.prune();
    return 0;
  }

  private refill(key: string): Bucket {
    const t = this.now();
    const b = this.buckets.get(key);
    if (!b) return { tokens: this.perMinute, at: t };
    b.tokens = Math.min(this.perMinute, b.tokens + (t - b.at) * this.perMs);
    b.at = t;
    return b;
  }

  private prune(): void {
    for (const key of [...this.buckets.keys()]) if (this.refill(key).tokens >= this.perMinute) this.buckets.delete(key);
  }
}
