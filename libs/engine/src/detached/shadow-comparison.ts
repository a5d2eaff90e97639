// The JSON shape of one shadow comparison (snake_case on the wire), shared by the gateway's /stats
// block (this replica) and the admin's GET /v1/tenants/{id}/shadow (every replica, from
// shadow_tallies), so both say the same thing the same way.
import type { ShadowCounts, ShadowPair } from '@context-guru/storage';

/** Why a sampled request was not evaluated against the candidate. */
export const DROP_REASONS = ['queue_full', 'busy', 'too_large', 'timeout', 'failed'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

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
