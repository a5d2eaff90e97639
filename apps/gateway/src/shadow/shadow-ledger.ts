// What shadow evaluation found on this replica, per tenant and version pair: the running totals
// behind /stats and /metrics, and the deltas since the last flush that shadow-flush.ts adds to
// the shared store (every replica's deltas sum there). Bounded: at most MAX_PAIRS pairs are held
// (the least recently touched go first); component keys come from the pipeline's own reports.
import { deleteOldest, type Report } from '@context-guru/components';
import { shadowCounts, type ShadowCounts, type ShadowPair } from '@context-guru/storage';
import type { DropReason } from '@context-guru/engine';
import type { GatewayMetrics } from '../observability/metrics';

const MAX_PAIRS = 256;

/** One evaluated request: the same body through the active pipeline (on the hot path) and the candidate (detached). */
export interface ShadowComparison {
  tokensBefore: number;
  tokensAfterActive: number;
  tokensAfterCandidate: number;
  actedActive: readonly string[];
  actedCandidate: readonly string[];
}

/** Components that removed tokens (the `acted` of cg_component_runs_total). */
export function actedComponents(reports: readonly Report[]): string[] {
  return reports.filter((r) => !r.reverted && r.changed.length > 0 && r.tokensAfter < r.tokensBefore).map((r) => r.component);
}

const pairKey = (p: ShadowPair) => `${p.tenant}\u0000${p.activeVersion}\u0000${p.candidateVersion}`;
const bump = (m: Record<string, number>, k: string, n = 1) => (m[k] = (m[k] ?? 0) + n);

interface Entry {
  pair: ShadowPair;
  counts: ShadowCounts;
}

export class ShadowLedger {
  private readonly totals = new Map<string, Entry>();
  private deltas = new Map<string, Entry>();

  constructor(private readonly metrics?: GatewayMetrics) {}

  sampled(pair: ShadowPair): void {
    this.each(pair, (c) => c.sampled++);
    if (this.metrics) {
      const tenant = this.metrics.tenants.label(pair.tenant);
      this.metrics.shadowSampled.inc({ tenant });
      this.metrics.shadowCandidateVersion.set({ tenant }, pair.candidateVersion);
    }
  }

  dropped(pair: ShadowPair, reason: DropReason): void {
    this.each(pair, (c) => bump(c.dropped, reason));
    this.metrics?.shadowDropped.inc({ tenant: this.metrics.tenants.label(pair.tenant), reason });
  }

  evaluated(pair: ShadowPair, r: ShadowComparison): void {
    this.each(pair, (c) => {
      c.evaluated++;
      c.tokensBefore += r.tokensBefore;
      c.tokensAfterActive += r.tokensAfterActive;
      c.tokensAfterCandidate += r.tokensAfterCandidate;
      for (const name of r.actedActive) bump(c.actedActive, name);
      for (const name of r.actedCandidate) bump(c.actedCandidate, name);
    });
    const m = this.metrics;
    if (!m) return;
    const tenant = m.tenants.label(pair.tenant);
    m.shadowEvaluated.inc({ tenant });
    m.shadowTokens.inc({ tenant, side: 'before' }, r.tokensBefore);
    m.shadowTokens.inc({ tenant, side: 'active' }, r.tokensAfterActive);
    m.shadowTokens.inc({ tenant, side: 'candidate' }, r.tokensAfterCandidate);
    for (const component of r.actedActive) m.shadowActed.inc({ tenant, component, side: 'active' });
    for (const component of r.actedCandidate) m.shadowActed.inc({ tenant, component, side: 'candidate' });
  }

  /** The deltas since the last drain (handed to the flush, which puts them back if its write fails). */
  drain(): Array<ShadowPair & ShadowCounts> {
    const out = [...this.deltas.values()].map((e) => ({ ...e.pair, ...e.counts }));
    this.deltas = new Map();
    return out;
  }

  /** Puts deltas back after a failed write, so the next flush carries them. */
  restore(deltas: ReadonlyArray<ShadowPair & ShadowCounts>): void {
    for (const d of deltas) {
      const { tenant, activeVersion, candidateVersion, ...counts } = d;
      add(this.entry(this.deltas, { tenant, activeVersion, candidateVersion }).counts, counts);
    }
  }

  /** This replica's totals for one tenant, newest pair first. */
  pairs(tenant: string): Array<{ pair: ShadowPair; counts: ShadowCounts }> {
    return [...this.totals.values()].filter((e) => e.pair.tenant === tenant).reverse();
  }

  private each(pair: ShadowPair, f: (c: ShadowCounts) => void): void {
    f(this.entry(this.totals, pair, true).counts);
    f(this.entry(this.deltas, pair).counts);
  }

  /** Map order is recency order: a touched pair is moved to the end (`touch`), the oldest evicted. */
  private entry(map: Map<string, Entry>, pair: ShadowPair, touch = false): Entry {
    const k = pairKey(pair);
    let e = map.get(k);
    if (e && touch) map.delete(k);
    e ??= { pair: { ...pair }, counts: shadowCounts() };
    map.set(k, e);
    if (map.size > MAX_PAIRS) deleteOldest(map);
    return e;
  }
}

function add(into: ShadowCounts, d: ShadowCounts): void {
  into.sampled += d.sampled;
  into.evaluated += d.evaluated;
  into.tokensBefore += d.tokensBefore;
  into.tokensAfterActive += d.tokensAfterActive;
  into.tokensAfterCandidate += d.tokensAfterCandidate;
  for (const [k, n] of Object.entries(d.dropped)) bump(into.dropped, k, n);
  for (const [k, n] of Object.entries(d.actedActive)) bump(into.actedActive, k, n);
  for (const [k, n] of Object.entries(d.actedCandidate)) bump(into.actedCandidate, k, n);
}
