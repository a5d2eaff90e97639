// The `tenant` label on metrics stays bounded: the first `cap` distinct tenants keep their own
// value, every later one is folded into `other`, so a deployment with thousands of tenants cannot
// blow up Prometheus. (The default tenant always keeps its name.)
import { DEFAULT_TENANT } from '@context-guru/engine';

const OTHER_TENANT = 'other';

export class TenantLabels {
  private readonly kept = new Set<string>([DEFAULT_TENANT]);

  constructor(readonly cap = 50) {}

  label(tenant: string): string {
    if (this.kept.has(tenant)) return tenant;
    if (this.kept.size >= this.cap) return OTHER_TENANT;
    this.kept.add(tenant);
    return tenant;
  }
}
