// Reads what changed in the control plane since a generation in ONE statement: a statement sees
// one snapshot, so the generation it reports and the tenants it returns agree (admin writes bump
// the generation in their own transaction, serialised on the control_generation row), and a
// replica busy serving traffic waits for one round trip, not one per table and tenant. It returns
// the same TenantState the admin's loadTenantState builds (dry-run and gateway build alike).
import { PRESETS, type PipelineDocument } from '@context-guru/components';
import { col, type Row, type SqlClient, type TenantState } from '@context-guru/storage';

export interface TenantRead {
  state: TenantState;
  /** Hashes of the keys that are not revoked. */
  keyHashes: string[];
  /** Some version of the tenant's config names a component (so a session may carry rewrites). */
  rewrote: boolean;
  /** The stored version the active document names as its shadow candidate (absent: none, or not found). */
  shadow?: { version: number; document: PipelineDocument };
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

export interface GenerationRow {
  generation: number;
  changedAt: number;
  /**
   * Which database this is: its oid and the generation table's. A restore recreates the tables (a
   * dump restored with --clean, or into a new database), so a replica tells the restored control
   * plane from the one it applied even when the generation has since climbed past its own.
   */
  identity: string;
}

/** The current generation, its commit time and the database's identity: the poll's one cheap statement. */
export async function readGenerationRow(sql: SqlClient): Promise<GenerationRow> {
  const rows = await sql.query(
    `SELECT g.generation, g.changed_at,
            (SELECT oid::bigint FROM pg_database WHERE datname = current_database()) AS db,
            'control_generation'::regclass::oid::bigint AS rel
       FROM (SELECT 1) AS one LEFT JOIN control_generation g ON g.id = 1`,
  );
  const r = rows[0];
  const identity = r ? `${col.num(r, 'db')}/${col.num(r, 'rel')}` : '';
  if (!r || r.generation === null || r.generation === undefined) return { generation: 0, changedAt: 0, identity };
  return { generation: col.num(r, 'generation'), changedAt: col.date(r, 'changed_at').getTime(), identity };
}

const CHANGED_SQL = `
  SELECT g.generation AS g_generation, g.changed_at AS g_changed_at,
         (SELECT coalesce(json_agg(id), '[]'::json) FROM tenants) AS g_ids,
         t.id, t.name, t.created_at, t.disabled_at, t.generation,
         (SELECT json_build_object('version', c.version, 'document', c.document)
            FROM pipeline_configs c WHERE c.tenant = t.id AND c.active) AS config,
         (SELECT json_build_object('version', s.version, 'document', s.document)
            FROM pipeline_configs a JOIN pipeline_configs s
              ON s.tenant = a.tenant AND s.version = (a.document #>> '{shadow,version}')::int AND s.version <> a.version
           WHERE a.tenant = t.id AND a.active) AS shadow,
         (SELECT coalesce(json_agg(json_build_object('name', f.name, 'version', f.version, 'yaml', f.yaml) ORDER BY f.name), '[]'::json)
            FROM filter_sets f WHERE f.tenant = t.id AND f.active) AS filters,
         (SELECT coalesce(json_agg(k.key_hash), '[]'::json)
            FROM api_keys k WHERE k.tenant = t.id AND k.revoked_at IS NULL) AS keys,
         (SELECT coalesce(json_agg(json_build_object('preset', c.document -> 'preset', 'pipeline', c.document -> 'pipeline')), '[]'::json)
            FROM pipeline_configs c WHERE c.tenant = t.id) AS versions
    FROM control_generation g LEFT JOIN tenants t ON t.generation > $1
   WHERE g.id = 1
   ORDER BY t.generation`;

function tenantRead(r: Row): TenantRead {
  const config = r.config as { version: number; document: PipelineDocument } | null;
  const versions = (r.versions ?? []) as PipelineDocument[];
  return {
    state: {
      tenant: {
        id: col.str(r, 'id'),
        name: col.str(r, 'name'),
        createdAt: col.date(r, 'created_at'),
        disabledAt: r.disabled_at == null ? null : col.date(r, 'disabled_at'),
        generation: col.num(r, 'generation'),
      },
      config: config ? { version: Number(config.version), document: config.document } : null,
      filters: (r.filters ?? []) as TenantState['filters'],
    },
    keyHashes: (r.keys ?? []) as string[],
    rewrote: versions.some((v) => namesComponents(v ?? {})),
    ...(r.shadow ? { shadow: r.shadow as { version: number; document: PipelineDocument } } : {}),
  };
}

export async function readControl(sql: SqlClient, since: number): Promise<ControlRead> {
  const rows = await sql.query(CHANGED_SQL, [since]);
  const head = rows[0];
  if (!head) throw new Error('control_generation has no row (migration 0004 not applied?)');
  return {
    generation: col.num(head, 'g_generation'),
    changedAt: col.date(head, 'g_changed_at').getTime(),
    changed: rows.filter((r) => r.id != null).map(tenantRead),
    ids: new Set((head.g_ids ?? []) as string[]),
  };
}
