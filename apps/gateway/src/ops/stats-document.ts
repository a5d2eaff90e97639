// One tenant's /stats document, built in one place for the route and for the admin's page in the
// embedded process, so both always show the same figures.
import type { GatewayContext } from '../gateway-context';
import { DEFAULT_TENANT } from '@context-guru/engine';
import { shadowStats } from './shadow-stats';

/**
 * Every ledger here is the tenant's own (its cmdfilter ledgers, its compaction-model spend): a
 * selector miss is the first line of a tool output, where secrets sit. `operator`: the caller
 * may read the operator's views (ops-access.ts); only then does the default tenant's view add
 * the store's freeze health, which counts over every tenant.
 */
export async function statsDocument(gw: GatewayContext, tenant: string, operator = false): Promise<Record<string, unknown>> {
  let health: Record<string, unknown> = {};
  if (operator && tenant === DEFAULT_TENANT) {
    const h = gw.store.health();
    health = {
      frozen_dropped: h.frozenDropped,
      frozen_repaired: h.frozenRepaired,
      frozen_flips: Math.max(0, h.frozenDropped - h.frozenRepaired),
    };
  }
  // The tenant's own count of turns whose new originals its byte budget refused (docs/security.md).
  const refused = gw.store.health().stashRefused;
  const own = {
    ...gw.stats.ledgers(tenant).snapshot(),
    ...gw.stats.spend(tenant).snapshot(),
    ...(refused && { stash_refused: refused.get(tenant) ?? 0 }),
  };
  // Measured savings come from the figures every replica shares (holdout/holdout-figures.ts).
  const runtime = gw.tenants.all().find((t) => t.id === tenant);
  const holdout = runtime ? await gw.holdout.statsBlock(runtime) : undefined;
  return gw.stats.snapshot(
    { ...health, ...own, ...gw.usage.snapshot(tenant), ...shadowStats(gw, tenant), ...(holdout ? { holdout } : {}) },
    tenant,
  );
}
