// The JSON shape of one shadow comparison (snake_case on the wire), shared by the tenant's /stats
// block (this replica) and GET /v1/tenants/{id}/shadow (every replica, from shadow_tallies), so
// both say the same thing the same way.
import type { ShadowCounts, ShadowPair } from '@context-guru/storage';
import type { GatewayContext } from '../gateway-context';
import { DROP_REASONS } from './shadow-ledger';

const share = (saved: number, before: number) => (before > 0 ? Math.round((saved / before) * 10000) / 10000 : 0);

export function comparisonView(pair: ShadowPair, c: ShadowCounts) {
  const savedActive = c.tokensBefore - c.tokensAfterActive;
  const savedCandidate = c.tokensBefore - c.tokensAfterCandidate;
  const names = [...new Set([...Object.keys(c.actedActive), ...Object.keys(c.actedCandidate)])].sort();
  return {
    active_version: pair.activeVersion,
    candidate_version: pair.candidateVersion,
    sampled: c.sampled,
    evaluated: c.evaluated,
    dropped: Object.fromEntries(DROP_REASONS.map((r) => [r, c.dropped[r] ?? 0])),
    tokens: { before: c.tokensBefore, after_active: c.tokensAfterActive, after_candidate: c.tokensAfterCandidate },
    saved: {
      active: savedActive,
      candidate: savedCandidate,
      active_share: share(savedActive, c.tokensBefore),
      candidate_share: share(savedCandidate, c.tokensBefore),
      candidate_minus_active: savedCandidate - savedActive,
    },
    components: names.map((component) => ({
      component,
      active: c.actedActive[component] ?? 0,
      candidate: c.actedCandidate[component] ?? 0,
    })),
  };
}

/** The `shadow` block of a tenant's /stats: its candidate, and this replica's comparisons (newest first). */
export function shadowStats(gw: GatewayContext, tenant: string): { shadow: Record<string, unknown> } {
  const runtime = gw.tenants.all().find((t) => t.id === tenant);
  const candidate = runtime?.shadow;
  return {
    shadow: {
      candidate: candidate ? { version: candidate.version, sample: candidate.sample, pipeline: candidate.runtime.built.names } : null,
      comparisons: gw.shadow.ledger.pairs(tenant).map((e) => comparisonView(e.pair, e.counts)),
    },
  };
}
