// Ops expand: an operator reads a stashed original by hash, for one tenant only (stashes are keyed
// by tenant, so another tenant's hash is simply not found), with a reason, rate-limited, and on
// the record: the audit row commits before the original is answered.
import { Inject, Injectable } from '@nestjs/common';
import { auditRepository, tenantsRepository } from '@context-guru/storage';
import { ADMIN_DEPS, type AdminDeps } from '../admin.options';
import { AdminError, notFound } from '../common/admin-errors';
import type { Actor } from '../common/auth.guard';
import { RateLimit } from '@context-guru/engine';

/** The bare hash, also when pasted as the whole marker (`<<cg:HASH>>`). */
function stashId(id: string): string {
  const [, hash] = /^<<cg:([0-9a-f]{16})>>$/.exec(id.trim()) ?? [];
  return hash ?? id.trim();
}

@Injectable()
export class OpsExpandService {
  private readonly limiter: RateLimit;

  constructor(@Inject(ADMIN_DEPS) private readonly deps: AdminDeps) {
    this.limiter = new RateLimit(deps.opsExpandPerMinute ?? 30);
  }

  async expand(actor: Actor, body: { tenant: string; id: string; reason: string }) {
    const id = stashId(body.id);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id))
      throw new AdminError('invalid_request', 'body/id: expected a stash hash or a <<cg:HASH>> marker');
    if (this.limiter.take(actor.id) > 0)
      throw new AdminError('rate_limited', `ops expand is limited to ${this.deps.opsExpandPerMinute ?? 30} per minute per actor`);
    if (!this.deps.store) throw new AdminError('store_unavailable', 'this admin process has no stash store configured');
    if (!(await tenantsRepository.get(this.deps.sql, body.tenant))) throw notFound(`tenant "${body.tenant}"`);
    let original: string | null;
    try {
      original = await this.deps.store.getStash(body.tenant, id);
    } catch {
      throw new AdminError('store_unavailable', 'the stash store did not answer');
    }
    if (original === null) throw notFound(`original ${id} for tenant "${body.tenant}"`);
    const chars = original.length;
    const seal = await this.deps.audit?.get();
    const { head } = await this.deps.sql.transaction((tx) =>
      auditRepository.append(
        tx,
        {
          actor: actor.id,
          action: 'ops.expand',
          tenant: body.tenant,
          target: id,
          reason: body.reason,
          detail: { chars },
        },
        seal,
      ),
    );
    await seal?.anchor?.advance(head).catch(() => undefined); // the expand is audited in the database either way

    return { id, original };
  }
}
