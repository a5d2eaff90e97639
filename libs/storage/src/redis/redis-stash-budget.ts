// The Redis side of a tenant's byte budget for stored originals (docs/security.md, abuse bounds):
// the write script (redis-scripts.ts, stash_fits) keeps the sizes and refuses; this keeps the
// keys it reads, the per-tenant count of refusals and what an erasure gives back.
import type { SessionSnapshot } from '@context-guru/components';
import type { RedisClient } from './redis-connection';

type Pipeline = ReturnType<RedisClient['pipeline']>;

export class StashBudget {
  /** Turns whose new originals the budget refused, per tenant (this process's count). */
  readonly refused = new Map<string, number>();

  /** `maxBytes`: per tenant, 0 for none. */
  constructor(readonly maxBytes: number) {}

  /** The tenant's size hash (id → bytes stored) and byte total, under its hash tag `t`. */
  keys(t: string): string[] {
    return [`${t}stashsz`, `${t}stashbytes`];
  }

  /** What a refused turn answers: nothing written, run again with no new original. */
  refuse(tenant: string): SessionSnapshot {
    this.refused.set(tenant, (this.refused.get(tenant) ?? 0) + 1);
    return { frozen: new Map(), lost: new Set(), kept: new Set(), stashFull: true };
  }

  /** Queues on `p` the release of erased originals `ids` of sizes `sizes` (HMGET of the size hash). */
  release(p: Pipeline, t: string, ids: readonly string[], sizes: readonly (string | null)[]): void {
    const [sz, bytes] = this.keys(t) as [string, string];
    if (ids.length) p.hdel(sz, ...ids);
    p.decrby(
      bytes,
      sizes.reduce((n, v) => n + Number(v ?? 0), 0),
    );
  }
}
