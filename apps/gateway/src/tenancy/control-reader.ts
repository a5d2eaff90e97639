// Reads what changed in the control plane since a generation, in ONE repeatable-read transaction,
// so the generation it reports and the tenants it returns are the same snapshot: a replica that
// applies the result has applied exactly that generation (admin writes bump it in their own
// transaction, serialised on the control_generation row).
import { PRESETS, type PipelineDocument } from '@context-guru/components';
import {
  apiKeysRepository,
  col,
  configsRepository,
  loadTenantState,
  tenantsRepository,
  type SqlClient,
  type TenantState,
} from '@context-guru/storage';

export interface TenantRead {
  state: TenantState;
  /** Hashes of the keys that are not revoked. */
  keyHashes: string[];
  /** Some version of the tenant's config names a component (so a session may carry rewrites). */
  rewrote: boolean;
}

export interface ControlRead {
  generation: number;
  /** When that generation was committed (epoch ms, database clock). */
  changedAt: number;
  changed: TenantRead[];
  /** Every tenant id that exists (a removed row drops out of the cache). */
  ids: Set<string>;
}

function namesComponents(doc: PipelineDocument): boolean {
  return (doc.pipeline ?? (doc.preset ? PRESETS[doc.preset] : undefined) ?? []).length > 0;
}

/** The current generation and its commit time: the poll's one cheap statement. */
export async function readGenerationRow(sql: SqlClient): Promise<{ generation: number; changedAt: number }> {
  const rows = await sql.query('SELECT generation, changed_at FROM control_generation WHERE id = 1');
  const r = rows[0];
  return r ? { generation: col.num(r, 'generation'), changedAt: col.date(r, 'changed_at').getTime() } : { generation: 0, changedAt: 0 };
}

export async function readControl(sql: SqlClient, since: number): Promise<ControlRead> {
  return sql.withConnection(async (c) => {
    await c.exec('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      const g = (await c.query('SELECT generation, changed_at FROM control_generation WHERE id = 1'))[0];
      const changed: TenantRead[] = [];
      for (const t of await tenantsRepository.changedSince(c, since)) {
        const state = await loadTenantState(c, t.id);
        if (!state) continue;
        const keys = await apiKeysRepository.tenantKeyHashes(c, t.id);
        const versions = await configsRepository.list(c, t.id);
        changed.push({
          state,
          keyHashes: keys.filter((k) => !k.revoked).map((k) => k.hash),
          rewrote: versions.some((v) => namesComponents(v.document)),
        });
      }
      const ids = new Set((await c.query('SELECT id FROM tenants')).map((r) => col.str(r, 'id')));
      await c.exec('COMMIT');
      return {
        generation: g ? col.num(g, 'generation') : 0,
        changedAt: g ? col.date(g, 'changed_at').getTime() : 0,
        changed,
        ids,
      };
    } catch (err) {
      await c.exec('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}
