// Every admin write goes through here: the change, its audit row and (when it changes what a
// gateway serves) the generation bump run in ONE transaction; the new generation is announced
// only after COMMIT, so a replica that hears it always reads the committed change.
import { Inject, Injectable } from '@nestjs/common';
import {
  auditRepository,
  bumpGeneration,
  type AnchoredHead,
  type AuditEntry,
  type AuditSeal,
  type SqlQueryable,
} from '@context-guru/storage';
import { ADMIN_DEPS, type AdminDeps } from '../admin.options';

export interface WriteOutcome<T> {
  result: T;
  audit: AuditEntry;
  /** The tenant whose served state changed (bumps the generation); absent: nothing served changed. */
  bump?: string;
}

@Injectable()
export class ControlWriter {
  constructor(@Inject(ADMIN_DEPS) private readonly deps: AdminDeps) {}

  async write<T>(fn: (tx: SqlQueryable) => Promise<WriteOutcome<T>>): Promise<T> {
    const seal = await this.seal();
    const { result, generation, head } = await this.deps.sql.transaction(async (tx) => {
      const out = await fn(tx);
      const { head } = await auditRepository.append(tx, out.audit, seal);
      const generation = out.bump ? await bumpGeneration(tx, out.bump) : undefined;
      return { result: out.result, generation, head };
    });
    await this.anchor(seal, head);
    if (generation !== undefined && this.deps.notifier) {
      await this.deps.notifier
        .notify(generation)
        .catch((err: unknown) => this.deps.log?.warn('generation not announced', { generation, err: String(err) }));
    }
    return result;
  }

  /** The audit seal, when the admin has one (its first use seals the chain). */
  seal(): Promise<AuditSeal | undefined> {
    return this.deps.audit ? this.deps.audit.get() : Promise.resolve(undefined);
  }

  /** Records a committed head outside the database; a failure is logged, the change stands. */
  async anchor(seal: AuditSeal | undefined, head: AnchoredHead): Promise<void> {
    await seal?.anchor?.advance(head).catch((err: unknown) => this.deps.log?.warn('audit head not anchored', { err: String(err) }));
  }

  /** Reads on the shared client (outside any write). */
  get sql() {
    return this.deps.sql;
  }
}
