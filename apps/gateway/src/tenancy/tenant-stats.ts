// /stats per tenant: one rollup per tenant id, so a tenant's key reads its own numbers and
// nothing of another tenant's. Tenants are the directory's (a refused key records nothing), so
// the map is bounded by the tenants that exist.
import { CmdfilterLedgers } from '../ops/ledgers';
import { SavingsTimeline } from '../observability/savings-timeline';
import { StatsRollup } from '../observability/stats';
import type { RequestReport } from '../observability/request-report';
import { DEFAULT_TENANT } from './tenant-runtime';

export class TenantStats {
  private readonly byTenant = new Map<string, StatsRollup>();
  /** Per-minute history and recent sessions, for the admin's built-in page. */
  readonly timeline = new SavingsTimeline();
  /** The operator's cmdfilter ledgers, over every tenant of this gateway (served on the default tenant's /stats). */
  readonly ledgers = new CmdfilterLedgers();

  record(r: RequestReport): void {
    this.rollup(r.tenant).record(r);
    this.timeline.record(r);
    this.ledgers.record(r);
  }

  /** Tenants that have recorded traffic in this process. */
  tenants(): string[] {
    return [...this.byTenant.keys()].sort();
  }

  snapshot(extra: Record<string, unknown> = {}, tenant = DEFAULT_TENANT): Record<string, unknown> {
    return { tenant, ...this.rollup(tenant).snapshot(extra) };
  }

  private rollup(tenant: string): StatsRollup {
    let r = this.byTenant.get(tenant);
    if (!r) {
      r = new StatsRollup();
      this.byTenant.set(tenant, r);
    }
    return r;
  }
}
