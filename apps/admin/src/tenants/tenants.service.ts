// Tenants: create, list, read, rename, disable/enable. Every change bumps the tenant's generation
// (a disabled tenant's keys stop working on every replica).
import { Injectable } from '@nestjs/common';
import { tenantsRepository, type SqlQueryable, type TenantRecord } from '@context-guru/storage';
import { AdminError, notFound } from '../common/admin-errors';
import type { Actor } from '../common/auth.guard';
import { ControlWriter } from '../common/control-writer';
import { tenantView } from '../common/views';

/** The tenant or a 404; `lock` takes its row lock for the rest of the transaction. */
export async function requireTenant(c: SqlQueryable, id: string, lock = false): Promise<TenantRecord> {
  const t = lock ? await tenantsRepository.lock(c, id) : await tenantsRepository.get(c, id);
  if (!t) throw notFound(`tenant "${id}"`);
  return t;
}

@Injectable()
export class TenantsService {
  constructor(private readonly writer: ControlWriter) {}

  create(actor: Actor, body: { id: string; name: string }) {
    return this.writer
      .write(async (tx) => {
        const t = await tenantsRepository.insert(tx, body);
        if (!t) throw new AdminError('conflict', `tenant "${body.id}" already exists`);
        return {
          result: t,
          audit: { actor: actor.id, action: 'tenant.create', tenant: t.id, target: t.id, after: tenantView(t) },
          bump: t.id,
        };
      })
      .then(async (t) => tenantView(await requireTenant(this.writer.sql, t.id)));
  }

  async list() {
    return (await tenantsRepository.list(this.writer.sql)).map(tenantView);
  }

  async get(id: string) {
    return tenantView(await requireTenant(this.writer.sql, id));
  }

  patch(actor: Actor, id: string, body: { name?: string; disabled?: boolean }, action = 'tenant.update') {
    return this.writer
      .write(async (tx) => {
        const before = await requireTenant(tx, id, true);
        const after = await tenantsRepository.update(tx, id, body);
        if (!after) throw notFound(`tenant "${id}"`); // locked above, so only a bug gets here
        return {
          result: id,
          audit: { actor: actor.id, action, tenant: id, target: id, before: tenantView(before), after: tenantView(after) },
          bump: id,
        };
      })
      .then((tid) => this.get(tid));
  }

  disable(actor: Actor, id: string) {
    return this.patch(actor, id, { disabled: true }, 'tenant.disable');
  }
}
