// The tenant's /stats `shadow` block: its candidate and this replica's comparisons, each in the
// shape GET /v1/tenants/{id}/shadow answers too (comparisonView, in the engine).
import type { GatewayContext } from '../gateway-context';
import { comparisonView } from '@context-guru/engine';

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
