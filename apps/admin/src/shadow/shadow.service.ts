// What a tenant's candidate config versions would have done beside its active ones, summed over
// every gateway replica (shadow_tallies, written by each replica's shadow flush), in the same
// shape as the `shadow` block of the gateway's /stats.
import { Injectable } from '@nestjs/common';
import { comparisonView } from '@context-guru/engine';
import { configsRepository, shadowTalliesRepository } from '@context-guru/storage';
import { ControlWriter } from '../common/control-writer';
import { requireTenant } from '../tenants/tenants.service';

@Injectable()
export class ShadowService {
  constructor(private readonly writer: ControlWriter) {}

  async get(tenant: string, filter: { active?: number; candidate?: number }) {
    await requireTenant(this.writer.sql, tenant);
    const [active, tallies] = await Promise.all([
      configsRepository.active(this.writer.sql, tenant),
      shadowTalliesRepository.list(this.writer.sql, tenant),
    ]);
    const shadow = active?.document.shadow;
    return {
      tenant,
      active_version: active?.version ?? null,
      candidate: shadow ? { version: shadow.version, sample: shadow.sample } : null,
      comparisons: tallies
        .filter(
          (t) => (filter.active ?? t.activeVersion) === t.activeVersion && (filter.candidate ?? t.candidateVersion) === t.candidateVersion,
        )
        .map((t) => ({ ...comparisonView(t, t), first_at: t.firstAt.toISOString(), updated_at: t.updatedAt.toISOString() })),
    };
  }
}
