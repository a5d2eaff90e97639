// Erasure in the durable store (docs/security.md): a tenant's or one session's rows, in one
// transaction, so a reader sees them whole or gone. Only rows that hold what a tenant sent (its
// originals, their ownership, frozen decisions, flags, turn records, kept marks, holdout arms)
// are deleted; the control plane's rows (the tenant, its configs, the audit log) stay.
import type { DurableStore } from './durable.store';
import type { SqlQueryable } from './sql-client';
import { deleteSessionOriginals } from './stash-bytes';

/**
 * Tables keyed by tenant whose rows are the tenant's data (and what counts them: the tenant's
 * archive byte counters go with it).
 */
const TENANT_TABLES = [
  'stash_archive',
  'stash_bytes',
  'ownership',
  'session_checkpoint',
  'session_state',
  'kept',
  'session_turn',
  'holdout_sessions',
];

/** The tenant's rows, in one transaction; the store's memo of what it archived lately is dropped. */
export async function eraseTenant(durable: DurableStore, tenant: string): Promise<void> {
  await durable.sql.transaction((c) => eraseTenantRows(c, tenant));
  durable.textArchived.clear();
  durable.stashBytes.forget(tenant);
}

/** One session's rows (eraseSessionRows), likewise. */
export async function eraseSession(durable: DurableStore, tenant: string, session: string): Promise<void> {
  await durable.sql.transaction((c) => eraseSessionRows(c, tenant, session));
  durable.textArchived.clear();
  durable.stashBytes.forget(tenant);
}

async function eraseTenantRows(c: SqlQueryable, tenant: string): Promise<void> {
  for (const table of TENANT_TABLES) await c.query(`DELETE FROM ${table} WHERE tenant = $1`, [tenant]);
}

/**
 * The session's originals (also when another session owns the same bytes: erasure wins; their
 * bytes go back to the tenant's budget), then its
 * ownership, checkpoints, flags and holdout arm, and the turn records of its conversations
 * (`session`, or `session#alias`: compared by prefix, never LIKE, since `_` may occur in an id).
 */
async function eraseSessionRows(c: SqlQueryable, tenant: string, session: string): Promise<void> {
  await deleteSessionOriginals(c, tenant, session);
  for (const table of ['ownership', 'session_checkpoint', 'session_state', 'holdout_sessions'])
    await c.query(`DELETE FROM ${table} WHERE tenant = $1 AND session = $2`, [tenant, session]);
  await c.query(`DELETE FROM session_turn WHERE tenant = $1 AND (session = $2 OR left(session, length($2) + 1) = $2 || '#')`, [
    tenant,
    session,
  ]);
}
