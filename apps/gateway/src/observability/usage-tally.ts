// Provider-billed usage of finished requests (tokens by kind, USD), summed per label set on the
// request path and added to cg_usage_tokens_total and cg_billed_usd_total when those are read (a
// /metrics scrape), instead of two to five labelled prom-client increments per upstream answer.
import type { Counter } from 'prom-client';
import { USAGE_KINDS, type UsageKind } from '@context-guru/engine';

interface Pending {
  labels: { tenant: string; dialect: string; origin: string };
  family: string;
  kinds: Record<UsageKind, number>;
  usd: number;
}

export interface UsageCounters {
  usageTokens: Counter<'tenant' | 'dialect' | 'origin' | 'kind'>;
  billedUsd: Counter<'tenant' | 'dialect' | 'origin' | 'family'>;
}

export class UsageTallies {
  private readonly pending = new Map<string, Pending>();

  add(tenant: string, dialect: string, origin: string, family: string, kinds: Record<UsageKind, number>, usd: number): void {
    const key = `${tenant}\u0000${dialect}\u0000${origin}\u0000${family}`;
    let p = this.pending.get(key);
    if (!p) {
      p = { labels: { tenant, dialect, origin }, family, kinds: { fresh: 0, cache_read: 0, cache_write: 0, output: 0 }, usd: 0 };
      this.pending.set(key, p);
    }
    for (const kind of USAGE_KINDS) p.kinds[kind] += kinds[kind];
    p.usd += usd;
  }

  /** Adds what accumulated since the last fold to the counters and starts again from zero. */
  fold(c: UsageCounters): void {
    for (const p of this.pending.values()) {
      for (const kind of USAGE_KINDS) {
        // A kind never billed has no series, as when each answer was added on its own.
        if (p.kinds[kind]) c.usageTokens.inc({ ...p.labels, kind }, p.kinds[kind]);
        p.kinds[kind] = 0;
      }
      c.billedUsd.inc({ ...p.labels, family: p.family }, p.usd);
      p.usd = 0;
    }
  }
}
