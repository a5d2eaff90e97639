// /stats per tenant: one rollup, one set of cmdfilter ledgers and one spend recorder per tenant id,
// so a tenant's key reads its own numbers and nothing of another tenant's (a selector miss is the
// first line of a tool output). Tenants are the directory's (a refused key records nothing), so
// the maps are bounded by the tenants that exist.
import { SpendRecorder } from '../model/spend-recorder';
import { CmdfilterLedgers } from '../observability/ledgers';
import { SavingsTimeline } from '../observability/savings-timeline';
import { StatsRollup } from '@context-guru/engine';
import { type RequestReport, DEFAULT_TENANT } from '@context-guru/engine';

export class TenantStats {
  private readonly byTenant = new Map<string, StatsRollup>();
  /** Per-minute history and recent sessions, for the admin's built-in page. */
  readonly timeline = new SavingsTimeline();
  private readonly ledgersByTenant = new Map<string, CmdfilterLedgers>();
  private readonly spendByTenant = new Map<string, SpendRecorder>();

  record(r: RequestReport): void {
    this.rollup(r.tenant).record(r);
    this.timeline.record(r);
    this.ledgers(r.tenant).record(r);
  }

  /** The tenant's cmdfilter ledgers (what its command outputs matched and missed). */
  ledgers(tenant: string): CmdfilterLedgers {
    return entry(this.ledgersByTenant, tenant, () => new CmdfilterLedgers());
  }

  /** What the tenant's requests spent on compaction models (the process-wide recorder feeds /metrics). */
  spend(tenant: string): SpendRecorder {
    return entry(this.spendByTenant, tenant, () => new SpendRecorder());
  }

  /** Tenants that have recorded traffic in this process. */
  tenants(): string[] {
    return [...this.byTenant.keys()].sort();
  }

  snapshot(extra: Record<string, unknown> = {}, tenant = DEFAULT_TENANT): Record<string, unknown> {
    return { tenant, ...this.rollup(tenant).snapshot(extra) };
  }

  private rollup(tenant: string): StatsRollup {
    return entry(this.byTenant, tenant, () => new StatsRollup());
  }
}

function entry<T>(map: Map<string, T>, tenant: string, make: () => T): T {
  let v = map.get(tenant);
  if (v === undefined) {
    v = make();
    map.set(tenant, v);
  }
  return v;
}
