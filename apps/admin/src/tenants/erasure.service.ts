// Erasure (docs/security.md): deleting a tenant, or one of its sessions, purges what it sent —
// originals, ownership records, frozen decisions, flags and turn records — from the hot store
// (memory or Redis) and the archive, and puts it on the audit record. A tenant is disabled first
// and erased once every live replica applied that (or the wait ran out), so no replica is still
// serving, and writing, the tenant when its rows go; what a replica queued is written before
// the purge by the store itself (TieredHotStore.eraseTenant).
import { Inject, Injectable } from '@nestjs/common';
import { auditRepository, replicasRepository } from '@context-guru/storage';
import { sessionIdBase } from '@context-guru/components';
import { ADMIN_DEPS, type AdminDeps } from '../admin.options';
import { AdminError } from '../common/admin-errors';
import type { Actor } from '../common/auth.guard';
import { ControlWriter } from '../common/control-writer';
import { TenantsService, requireTenant } from './tenants.service';

/** How long a tenant erasure waits for every live replica to stop serving the tenant. */
const PROPAGATION_WAIT_MS = 10_000;
const POLL_MS = 100;

@Injectable()
export class ErasureService {
  constructor(
    @Inject(ADMIN_DEPS) private readonly deps: AdminDeps,
    private readonly tenants: TenantsService,
    private readonly writer: ControlWriter,
  ) {}

  /** DELETE /v1/tenants/{id}: disabled (keys stop working), then everything it sent is erased. */
  async eraseTenant(actor: Actor, id: string) {
    const erase = this.eraser('eraseTenant');
    const disabled = await this.tenants.disable(actor, id);
    const started = Date.now();
    const pending = await this.replicasBehind(disabled.generation);
    await this.purge(() => erase.call(this.deps.store, id));
    await this.audit(actor, 'tenant.erase', id, id, { replicas_not_applied: pending, waited_ms: Date.now() - started });
    return { ...disabled, erased: true };
  }

  /** DELETE /v1/tenants/{id}/sessions/{session}: the session as the client named it (or its derived id). */
  async eraseSession(actor: Actor, id: string, session: string) {
    const erase = this.eraser('eraseSession');
    await requireTenant(this.deps.sql, id);
    const base = sessionIdBase(session);
    if (!base) throw new AdminError('invalid_request', 'session must not be blank');
    await this.purge(() => erase.call(this.deps.store, id, `${id}:${base}`));
    await this.audit(actor, 'session.erase', id, base, {});
    return { tenant: id, session: base, erased: true };
  }

  private eraser<K extends 'eraseTenant' | 'eraseSession'>(method: K) {
    const fn = this.deps.store?.[method];
    if (!fn) throw new AdminError('store_unavailable', 'this admin process has no stash store that can erase');
    return fn;
  }

  private async purge(run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (err) {
      this.deps.log?.error('erasure failed', { err: String(err) });
      throw new AdminError('store_unavailable', 'the stash store or the database did not answer: nothing is reported erased, try again');
    }
  }

  /** Live replicas that have not applied `generation` when the wait ends (0: every one has). */
  private async replicasBehind(generation: number): Promise<number> {
    const deadline = Date.now() + PROPAGATION_WAIT_MS;
    for (;;) {
      const behind = (await replicasRepository.live(this.deps.sql)).filter((r) => r.generation < generation).length;
      if (behind === 0 || Date.now() >= deadline) return behind;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  private async audit(actor: Actor, action: string, tenant: string, target: string, detail: Record<string, unknown>): Promise<void> {
    // On the sealed chain, its head anchored outside the database, as every admin write.
    const seal = await this.writer.seal();
    const entry = { actor: actor.id, action, tenant, target, detail };
    const { head } = await this.deps.sql.transaction((tx) => auditRepository.append(tx, entry, seal));
    await this.writer.anchor(seal, head);
  }
}
