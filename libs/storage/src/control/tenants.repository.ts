// Tenants rows. A disabled tenant keeps its row (and history); its keys stop working because the
// gateway refuses any key of a tenant whose disabled_at is set.
import { col, type Row, type SqlQueryable } from '../sql/sql-client';

export interface TenantRecord {
  id: string;
  name: string;
  createdAt: Date;
  disabledAt: Date | null;
  /** The generation of the last change that touched this tenant (migration 0004). */
  generation: number;
}

const COLUMNS = 'id, name, created_at, disabled_at, generation';

function toTenant(r: Row): TenantRecord {
  return {
    id: col.str(r, 'id'),
    name: col.str(r, 'name'),
    createdAt: col.date(r, 'created_at'),
    disabledAt: r.disabled_at == null ? null : col.date(r, 'disabled_at'),
    generation: col.num(r, 'generation'),
  };
}

export const tenantsRepository = {
  /** Null when the id is taken. */
  async insert(c: SqlQueryable, t: { id: string; name: string }): Promise<TenantRecord | null> {
    const rows = await c.query(`INSERT INTO tenants (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`, [
      t.id,
      t.name,
    ]);
    return rows[0] ? toTenant(rows[0]) : null;
  },

  async list(c: SqlQueryable): Promise<TenantRecord[]> {
    return (await c.query(`SELECT ${COLUMNS} FROM tenants ORDER BY id`)).map(toTenant);
  },

  async get(c: SqlQueryable, id: string): Promise<TenantRecord | null> {
    const rows = await c.query(`SELECT ${COLUMNS} FROM tenants WHERE id = $1`, [id]);
    return rows[0] ? toTenant(rows[0]) : null;
  },

  /** Locks the tenant's row for the rest of the transaction: version numbering per tenant is serial. */
  async lock(c: SqlQueryable, id: string): Promise<TenantRecord | null> {
    const rows = await c.query(`SELECT ${COLUMNS} FROM tenants WHERE id = $1 FOR UPDATE`, [id]);
    return rows[0] ? toTenant(rows[0]) : null;
  },

  async update(c: SqlQueryable, id: string, p: { name?: string; disabled?: boolean }): Promise<TenantRecord | null> {
    const rows = await c.query(
      `UPDATE tenants SET name = COALESCE($2, name),
         disabled_at = CASE WHEN $3::boolean IS NULL THEN disabled_at
                            WHEN $3::boolean THEN COALESCE(disabled_at, now()) ELSE NULL END
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, p.name ?? null, p.disabled ?? null],
    );
    return rows[0] ? toTenant(rows[0]) : null;
  },

  /** The tenants a replica that applied `generation` must reload. */
  async changedSince(c: SqlQueryable, generation: number): Promise<TenantRecord[]> {
    return (await c.query(`SELECT ${COLUMNS} FROM tenants WHERE generation > $1 ORDER BY generation`, [generation])).map(toTenant);
  },
};
