// One tenant's /stats document, built in one place for the route and for the admin's page in the
// embedded process, so both always show the same figures.
import type { GatewayContext } from '../gateway-context';
import { DEFAULT_TENANT } from '../tenancy/tenant-runtime';
import { shadowStats } from '../shadow/shadow-view';

export async function statsDocument(gw: GatewayContext, tenant: string): Promise<Record<string, unknown>> {
  // The gateway-wide ledgers (command selectors, model spend, freeze health) are the operator's:
  // only the default tenant's view carries them.
  let extra: Record<string, unknown> = {};
  if (tenant === DEFAULT_TENANT) {
    const health = gw.store.health();
    extra = {
      frozen_dropped: health.frozenDropped,
      frozen_repaired: health.frozenRepaired,
      frozen_flips: Math.max(0, health.frozenDropped - health.frozenRepaired),
      ...gw.stats.ledgers.snapshot(),
      ...gw.models.spend.snapshot(),
    };
  }
  // Measured savings come from the figures every replica shares (holdout/holdout-figures.ts).
  const runtime = gw.tenants.all().find((t) => t.id === tenant);
  const holdout = runtime ? await gw.holdout.statsBlock(runtime) : undefined;
  return gw.stats.snapshot({ ...extra, ...gw.usage.snapshot(tenant), ...shadowStats(gw, tenant), ...(holdout ? { holdout } : {}) }, tenant);
}
