// Versions of a tenant's pipeline document: immutable once written (no UPDATE of document here),
// numbered 1, 2, … per tenant, at most one active. Callers hold the tenant's row lock
// (tenantsRepository.lock) so numbering and activation are serial per tenant.
import type { PipelineDocument } from '@context-guru/components';
import { col, firstRow, type Row, type SqlQueryable } from '../sql/sql-client';

export interface ConfigVersion {
  tenant: string;
  version: number;
  document: PipelineDocument;
  createdBy: string | null;
  createdAt: Date;
  active: boolean;
}

const COLUMNS = 'tenant, version, document, created_by, created_at, active';

function toVersion(r: Row): ConfigVersion {
  return {
    tenant: col.str(r, 'tenant'),
    version: col.num(r, 'version'),
    document: r.document as PipelineDocument,
    createdBy: r.created_by == null ? null : col.str(r, 'created_by'),
    createdAt: col.date(r, 'created_at'),
    active: col.bool(r, 'active'),
  };
}

export const configsRepository = {
  async insert(c: SqlQueryable, tenant: string, document: PipelineDocument, createdBy: string): Promise<ConfigVersion> {
    const rows = await c.query(
      `INSERT INTO pipeline_configs (tenant, version, document, created_by)
       SELECT $1, COALESCE(MAX(version), 0) + 1, $2::jsonb, $3 FROM pipeline_configs WHERE tenant = $1
       RETURNING ${COLUMNS}`,
      [tenant, JSON.stringify(document), createdBy],
    );
    return toVersion(firstRow(rows, 'pipeline config insert'));
  },

  async list(c: SqlQueryable, tenant: string): Promise<ConfigVersion[]> {
    return (await c.query(`SELECT ${COLUMNS} FROM pipeline_configs WHERE tenant = $1 ORDER BY version`, [tenant])).map(toVersion);
  },

  async get(c: SqlQueryable, tenant: string, version: number): Promise<ConfigVersion | null> {
    const rows = await c.query(`SELECT ${COLUMNS} FROM pipeline_configs WHERE tenant = $1 AND version = $2`, [tenant, version]);
    return rows[0] ? toVersion(rows[0]) : null;
  },

  /** The highest version number stored for the tenant (0 when none): the next push is this + 1. */
  async latest(c: SqlQueryable, tenant: string): Promise<number> {
    const rows = await c.query('SELECT COALESCE(MAX(version), 0) AS v FROM pipeline_configs WHERE tenant = $1', [tenant]);
    return col.num(firstRow(rows, 'latest pipeline config version'), 'v');
  },

  async active(c: SqlQueryable, tenant: string): Promise<ConfigVersion | null> {
    const rows = await c.query(`SELECT ${COLUMNS} FROM pipeline_configs WHERE tenant = $1 AND active`, [tenant]);
    return rows[0] ? toVersion(rows[0]) : null;
  },

  /** Makes `version` the only active one; two statements, since the one-active index is checked per row. */
  async activate(c: SqlQueryable, tenant: string, version: number): Promise<void> {
    await c.query('UPDATE pipeline_configs SET active = false WHERE tenant = $1 AND active AND version <> $2', [tenant, version]);
    await c.query('UPDATE pipeline_configs SET active = true WHERE tenant = $1 AND version = $2', [tenant, version]);
  },
};
