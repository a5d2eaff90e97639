// Versions of a tenant's pipeline document. A push validates by building, then stores a new
// immutable version (optionally activating it in the same transaction); activation — and so
// rollback, which is activating an earlier version — bumps the tenant's generation.
import { Injectable } from '@nestjs/common';
import { configsRepository, type SqlQueryable } from '@context-guru/storage';
import { notFound } from '../common/admin-errors';
import type { Actor } from '../common/auth.guard';
import { ControlWriter } from '../common/control-writer';
import { configView } from '../common/views';
import { requireTenant } from '../tenants/tenants.service';
import { diffDocuments, type ConfigDiff } from './config-diff';
import { checkDocument } from './document-check';
import { checkShadowVersion } from './shadow-check';

async function requireVersion(c: SqlQueryable, tenant: string, version: number) {
  const v = await configsRepository.get(c, tenant, version);
  if (!v) throw notFound(`config version ${version} of tenant "${tenant}"`);
  return v;
}

@Injectable()
export class ConfigsService {
  constructor(private readonly writer: ControlWriter) {}

  async push(actor: Actor, tenant: string, raw: unknown, activate: boolean) {
    const { document, built } = checkDocument(raw); // before any transaction: a bad one stores nothing
    return this.writer.write(async (tx) => {
      await requireTenant(tx, tenant, true);
      await checkShadowVersion(tx, tenant, document);
      const before = activate ? await configsRepository.active(tx, tenant) : null;
      const v = await configsRepository.insert(tx, tenant, document, actor.id);
      if (activate) await configsRepository.activate(tx, tenant, v.version);
      return {
        result: { version: v.version, active: activate, pipeline: built.names },
        audit: {
          actor: actor.id,
          action: activate ? 'config.push_activate' : 'config.push',
          tenant,
          target: String(v.version),
          before: before ? { version: before.version } : null,
          after: { version: v.version, document },
        },
        bump: activate ? tenant : undefined,
      };
    });
  }

  activate(actor: Actor, tenant: string, version: number) {
    return this.writer.write(async (tx) => {
      await requireTenant(tx, tenant, true);
      await requireVersion(tx, tenant, version);
      const before = await configsRepository.active(tx, tenant);
      await configsRepository.activate(tx, tenant, version);
      const rollback = before !== null && version < before.version;
      return {
        result: { version, active: true, previous: before?.version ?? null },
        audit: {
          actor: actor.id,
          action: rollback ? 'config.rollback' : 'config.activate',
          tenant,
          target: String(version),
          before: before ? { version: before.version } : null,
          after: { version },
        },
        bump: tenant,
      };
    });
  }

  async list(tenant: string) {
    await requireTenant(this.writer.sql, tenant);
    return (await configsRepository.list(this.writer.sql, tenant)).map(configView);
  }

  async active(tenant: string) {
    await requireTenant(this.writer.sql, tenant);
    const v = await configsRepository.active(this.writer.sql, tenant);
    if (!v) throw notFound(`an active config of tenant "${tenant}"`);
    return configView(v);
  }

  async get(tenant: string, version: number) {
    await requireTenant(this.writer.sql, tenant);
    return configView(await requireVersion(this.writer.sql, tenant, version));
  }

  async diff(tenant: string, from: number, to: number): Promise<ConfigDiff & { from: number; to: number }> {
    await requireTenant(this.writer.sql, tenant);
    const a = await requireVersion(this.writer.sql, tenant, from);
    const b = await requireVersion(this.writer.sql, tenant, to);
    return { from, to, ...diffDocuments(a.document, b.document) };
  }
}
