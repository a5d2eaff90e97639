// Versions of a tenant's named cmdfilter DSL documents, like pipeline configs: immutable, numbered
// per (tenant, name), at most one active per name. Deleting a set deactivates it (history stays).
import { col, firstRow, type Row, type SqlQueryable } from '../sql/sql-client';

export interface FilterVersion {
  tenant: string;
  name: string;
  version: number;
  yaml: string;
  createdBy: string | null;
  createdAt: Date;
  active: boolean;
}

export interface FilterSummary {
  name: string;
  latest: number;
  /** Null when no version of the set is active (never activated, or deleted). */
  active: number | null;
}

const COLUMNS = 'tenant, name, version, yaml, created_by, created_at, active';

function toVersion(r: Row): FilterVersion {
  return {
    tenant: col.str(r, 'tenant'),
    name: col.str(r, 'name'),
    version: col.num(r, 'version'),
    yaml: col.str(r, 'yaml'),
    createdBy: r.created_by == null ? null : col.str(r, 'created_by'),
    createdAt: col.date(r, 'created_at'),
    active: col.bool(r, 'active'),
  };
}

export const filtersRepository = {
  async insert(c: SqlQueryable, tenant: string, name: string, yaml: string, createdBy: string): Promise<FilterVersion> {
    const rows = await c.query(
      `INSERT INTO filter_sets (tenant, name, version, yaml, created_by)
       SELECT $1, $2, COALESCE(MAX(version), 0) + 1, $3, $4 FROM filter_sets WHERE tenant = $1 AND name = $2
       RETURNING ${COLUMNS}`,
      [tenant, name, yaml, createdBy],
    );
    return toVersion(firstRow(rows, 'filter set insert'));
  },

  async summaries(c: SqlQueryable, tenant: string): Promise<FilterSummary[]> {
    const rows = await c.query(
      `SELECT name, MAX(version) AS latest, MAX(CASE WHEN active THEN version END) AS active
       FROM filter_sets WHERE tenant = $1 GROUP BY name ORDER BY name`,
      [tenant],
    );
    return rows.map((r) => ({
      name: col.str(r, 'name'),
      latest: col.num(r, 'latest'),
      active: r.active == null ? null : col.num(r, 'active'),
    }));
  },

  async versions(c: SqlQueryable, tenant: string, name: string): Promise<FilterVersion[]> {
    return (await c.query(`SELECT ${COLUMNS} FROM filter_sets WHERE tenant = $1 AND name = $2 ORDER BY version`, [tenant, name])).map(
      toVersion,
    );
  },

  async get(c: SqlQueryable, tenant: string, name: string, version: number): Promise<FilterVersion | null> {
    const rows = await c.query(`SELECT ${COLUMNS} FROM filter_sets WHERE tenant = $1 AND name = $2 AND version = $3`, [
      tenant,
      name,
      version,
    ]);
    return rows[0] ? toVersion(rows[0]) : null;
  },

  /** The tenant's active sets, by name: what its cmdfilter runs (plus builtins unless disabled). */
  async activeSets(c: SqlQueryable, tenant: string): Promise<FilterVersion[]> {
    return (await c.query(`SELECT ${COLUMNS} FROM filter_sets WHERE tenant = $1 AND active ORDER BY name`, [tenant])).map(toVersion);
  },

  async activate(c: SqlQueryable, tenant: string, name: string, version: number): Promise<void> {
    await c.query('UPDATE filter_sets SET active = false WHERE tenant = $1 AND name = $2 AND active AND version <> $3', [
      tenant,
      name,
      version,
    ]);
    await c.query('UPDATE filter_sets SET active = true WHERE tenant = $1 AND name = $2 AND version = $3', [tenant, name, version]);
  },

  /** Deactivates every version of the set; returns how many were active (0 or 1). */
  async deactivate(c: SqlQueryable, tenant: string, name: string): Promise<number> {
    return (
      await c.query('UPDATE filter_sets SET active = false WHERE tenant = $1 AND name = $2 AND active RETURNING version', [tenant, name])
    ).length;
  },
};
