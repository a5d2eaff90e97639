// A tenant's measured savings: the treated-vs-holdout estimate of each config version, from the
// sessions every gateway replica added to holdout_sessions. The same estimate (libs/storage
// savings-estimate.ts) as the gateways' /stats, so both always agree on the same rows.
import { Injectable } from '@nestjs/common';
import { byVersion, configsRepository, estimateSavings, holdoutSessionsRepository, tenantsRepository } from '@context-guru/storage';
import { notFound } from '../common/admin-errors';
import { ControlWriter } from '../common/control-writer';

@Injectable()
export class SavingsService {
  constructor(private readonly writer: ControlWriter) {}

  async get(tenant: string, version?: number) {
    const sql = this.writer.sql;
    const [record, active, rows] = await Promise.all([
      tenantsRepository.get(sql, tenant),
      configsRepository.active(sql, tenant),
      holdoutSessionsRepository.list(sql, tenant, version),
    ]);
    // A tenant the control plane does not know may still have figures: `default` served from PRESET/CONFIG.
    if (!record && rows.length === 0) throw notFound(`tenant "${tenant}"`);
    if (version !== undefined && rows.length === 0 && !(await configsRepository.get(sql, tenant, version))) {
      throw notFound(`config version ${version} of tenant "${tenant}"`);
    }
    const seed = version ?? active?.version;
    const versions = byVersion(rows, seed === undefined ? [] : [seed]);
    return {
      tenant,
      active_version: active?.version ?? null,
      fraction: active?.document.holdout?.fraction ?? null,
      versions: versions.map(([v, list]) => ({ version: v, active: v === active?.version, ...estimateSavings(list) })),
    };
  }
}
