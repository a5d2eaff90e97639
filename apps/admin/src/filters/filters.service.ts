// Named cmdfilter DSL documents per tenant. A push loads the document with its inline tests (the
// loader cmdfilter uses) before anything is stored; activation and delete change what the
// tenant's cmdfilter runs, so they bump its generation.
import { Injectable } from '@nestjs/common';
import { DslError, loadFilterDocument } from '@context-guru/dsl';
import { filtersRepository } from '@context-guru/storage';
import { AdminError, notFound } from '../common/admin-errors';
import type { Actor } from '../common/auth.guard';
import { ControlWriter } from '../common/control-writer';
import { filterView } from '../common/views';
import { requireTenant } from '../tenants/tenants.service';

/** The filter names of a document that loads; a 422 naming the DSL line otherwise. */
function checkFilterSet(name: string, yaml: string): string[] {
  try {
    return loadFilterDocument(yaml, `filters/${name}`).filters.map((f) => f.name);
  } catch (err) {
    if (err instanceof DslError) throw new AdminError('invalid_filter', err.message);
    throw new AdminError('invalid_filter', `filters/${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

@Injectable()
export class FiltersService {
  constructor(private readonly writer: ControlWriter) {}

  async push(actor: Actor, tenant: string, name: string, yaml: string, activate: boolean) {
    const filters = checkFilterSet(name, yaml);
    return this.writer.write(async (tx) => {
      await requireTenant(tx, tenant, true);
      const v = await filtersRepository.insert(tx, tenant, name, yaml, actor.id);
      if (activate) await filtersRepository.activate(tx, tenant, name, v.version);
      return {
        result: { name, version: v.version, active: activate, filters },
        audit: {
          actor: actor.id,
          action: activate ? 'filter.push_activate' : 'filter.push',
          tenant,
          target: `${name}@${v.version}`,
          after: { name, version: v.version, filters },
        },
        bump: activate ? tenant : undefined,
      };
    });
  }

  activate(actor: Actor, tenant: string, name: string, version: number) {
    return this.writer.write(async (tx) => {
      await requireTenant(tx, tenant, true);
      if (!(await filtersRepository.get(tx, tenant, name, version))) throw notFound(`version ${version} of filter set "${name}"`);
      const before = (await filtersRepository.summaries(tx, tenant)).find((s) => s.name === name)?.active ?? null;
      await filtersRepository.activate(tx, tenant, name, version);
      return {
        result: { name, version, active: true, previous: before },
        audit: {
          actor: actor.id,
          action: 'filter.activate',
          tenant,
          target: `${name}@${version}`,
          before: { version: before },
          after: { version },
        },
        bump: tenant,
      };
    });
  }

  remove(actor: Actor, tenant: string, name: string) {
    return this.writer.write(async (tx) => {
      await requireTenant(tx, tenant, true);
      const versions = await filtersRepository.versions(tx, tenant, name);
      if (versions.length === 0) throw notFound(`filter set "${name}"`);
      const active = versions.find((v) => v.active)?.version ?? null;
      await filtersRepository.deactivate(tx, tenant, name);
      return {
        result: { name, active: false, previous: active },
        audit: { actor: actor.id, action: 'filter.delete', tenant, target: name, before: { version: active }, after: { version: null } },
        bump: tenant,
      };
    });
  }

  async list(tenant: string) {
    await requireTenant(this.writer.sql, tenant);
    return filtersRepository.summaries(this.writer.sql, tenant);
  }

  async get(tenant: string, name: string) {
    await requireTenant(this.writer.sql, tenant);
    const versions = await filtersRepository.versions(this.writer.sql, tenant, name);
    if (versions.length === 0) throw notFound(`filter set "${name}"`);
    return { name, active: versions.find((v) => v.active)?.version ?? null, versions: versions.map(filterView) };
  }
}
