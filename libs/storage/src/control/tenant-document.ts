// What a tenant serves, read in one place for the gateway's runtime cache and the admin's dry-run,
// so both build exactly the same pipeline: the active pipeline document with the tenant's active
// filter sets appended to cmdfilter's `filters` (builtins stay unless the document disables them).
import type { PipelineDocument } from '@context-guru/components';
import type { SqlQueryable } from '../sql/sql-client';
import { configsRepository } from './configs.repository';
import { filtersRepository, type FilterVersion } from './filters.repository';
import { tenantsRepository, type TenantRecord } from './tenants.repository';

export interface TenantState {
  tenant: TenantRecord;
  /** Null when the tenant has no active config (the gateway then serves its PRESET/CONFIG default). */
  config: { version: number; document: PipelineDocument } | null;
  filters: Array<Pick<FilterVersion, 'name' | 'version' | 'yaml'>>;
}

/** The tenant's served state, or null for an unknown tenant. Read it in one transaction for a consistent view. */
export async function loadTenantState(c: SqlQueryable, id: string): Promise<TenantState | null> {
  const tenant = await tenantsRepository.get(c, id);
  if (!tenant) return null;
  const active = await configsRepository.active(c, id);
  const filters = await filtersRepository.activeSets(c, id);
  return {
    tenant,
    config: active ? { version: active.version, document: active.document } : null,
    filters: filters.map((f) => ({ name: f.name, version: f.version, yaml: f.yaml })),
  };
}

/** The document to build: filter sets join any inline cmdfilter filters the document already has. */
export function composeTenantDocument(document: PipelineDocument, filters: ReadonlyArray<{ yaml: string }>): PipelineDocument {
  if (filters.length === 0) return document;
  const components = { ...(document.components ?? {}) };
  const block = (components.cmdfilter ?? {}) as Record<string, unknown>;
  const inline = Array.isArray(block.filters) ? (block.filters as unknown[]) : [];
  components.cmdfilter = { ...block, filters: [...inline, ...filters.map((f) => f.yaml)] };
  return { ...document, components };
}
