// Every admin write goes through here: the change, its audit row and (when it changes what a
// gateway serves) the generation bump run in ONE transaction; the new generation is announced
// only after COMMIT, so a replica that hears it always reads the committed change.
import { Inject, Injectable } from '@nestjs/common';
import { auditRepository, bumpGeneration, type AuditEntry, type SqlQueryable } from '@context-guru/storage';
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
    const { result, generation } = await this.deps.sql.transaction(async (tx) => {
      const out = await fn(tx);
      await auditRepository.append(tx, out.audit);
      const generation = out.bump ? await bumpGeneration(tx, out.bump) : undefined;
      return { result: out.result, generation };
    });
    if (generation !== undefined && this.deps.notifier) {
      await this.deps.notifier
        .notify(generation)
        .catch((err: unknown) => this.deps.log?.warn('generation not announced', { generation, err: String(err) }));
    }
    return result;
  }

  /** Reads on the shared client (outside any write). */
  get sql() {
    return this.deps.sql;
  }
}
