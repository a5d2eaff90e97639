// Tenant keys (`cg_live_…`) and admin keys (`cg_adm_…`): issued with the key shown once, stored as
// SHA-256, revoked by id. Tenant key changes bump the tenant's generation (a revoked key is
// refused on every replica within the propagation bound); admin keys serve nothing, so they only
// audit — the admin checks its keys on every request.
import { Injectable } from '@nestjs/common';
import { apiKeysRepository, generateKey, type AdminRole } from '@context-guru/storage';
import { notFound } from '../common/admin-errors';
import type { Actor } from '../common/auth.guard';
import { ControlWriter } from '../common/control-writer';
import { keyView } from '../common/views';
import { requireTenant } from '../tenants/tenants.service';

@Injectable()
export class KeysService {
  constructor(private readonly writer: ControlWriter) {}

  /** tenant null: an admin key with `role`. */
  issue(actor: Actor, tenant: string | null, role: AdminRole | 'tenant', label: string | undefined) {
    return this.writer.write(async (tx) => {
      if (tenant) await requireTenant(tx, tenant, true);
      const k = generateKey(tenant ? 'tenant' : 'admin');
      const rec = await apiKeysRepository.insert(tx, {
        hash: k.hash,
        prefix: k.prefix,
        role,
        tenant,
        label: label ?? null,
        createdBy: actor.id,
      });
      return {
        result: { ...keyView(rec), key: k.key },
        audit: { actor: actor.id, action: tenant ? 'key.issue' : 'admin_key.issue', tenant, target: rec.id, after: keyView(rec) },
        bump: tenant ?? undefined,
      };
    });
  }

  async list(tenant: string | null) {
    if (tenant) await requireTenant(this.writer.sql, tenant);
    return (await apiKeysRepository.list(this.writer.sql, tenant)).map(keyView);
  }

  revoke(actor: Actor, tenant: string | null, id: string) {
    return this.writer.write(async (tx) => {
      if (tenant) await requireTenant(tx, tenant, true);
      const what = tenant ? `key "${id}" of tenant "${tenant}"` : `admin key "${id}"`;
      const before = await apiKeysRepository.get(tx, id, tenant);
      if (!before) throw notFound(what);
      const after = await apiKeysRepository.revoke(tx, id);
      if (!after) throw notFound(what);
      return {
        result: keyView(after),
        audit: {
          actor: actor.id,
          action: tenant ? 'key.revoke' : 'admin_key.revoke',
          tenant,
          target: id,
          before: keyView(before),
          after: keyView(after),
        },
        bump: tenant ?? undefined,
      };
    });
  }
}
