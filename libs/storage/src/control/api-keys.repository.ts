// API keys: tenant keys (`cg_live_…`, role tenant) and admin keys (`cg_adm_…`, admin | operator |
// viewer). A key is shown once; only its hex SHA-256 is stored, with a short prefix for listings.
import { createHash, randomBytes } from 'node:crypto';
import { col, firstRow, type Row, type SqlQueryable } from '../sql/sql-client';

export const ADMIN_ROLES = ['admin', 'operator', 'viewer'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];
export type KeyRole = AdminRole | 'tenant';

export const TENANT_KEY_PREFIX = 'cg_live_';
export const ADMIN_KEY_PREFIX = 'cg_adm_';
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** A fresh key: the kind's prefix + 32 base62 characters (≈190 bits), its hash and listing prefix. */
export function generateKey(kind: 'tenant' | 'admin'): { key: string; hash: string; prefix: string } {
  let body = '';
  // 256 % 62 ≠ 0, so rejecting bytes ≥ 248 keeps every character equally likely.
  const take = (bytes: Buffer) => {
    for (const b of bytes) if (body.length < 32 && b < 248) body += BASE62.charAt(b % 62);
  };
  take(randomBytes(32));
  while (body.length < 32) take(randomBytes(1));
  const key = (kind === 'tenant' ? TENANT_KEY_PREFIX : ADMIN_KEY_PREFIX) + body;
  return { key, hash: hashKey(key), prefix: key.slice(0, 12) };
}

export interface ApiKeyRecord {
  id: string;
  prefix: string;
  role: KeyRole;
  tenant: string | null;
  label: string | null;
  createdAt: Date;
  createdBy: string | null;
  revokedAt: Date | null;
}

const COLUMNS = 'id, prefix, role, tenant, label, created_at, created_by, revoked_at';

function toKey(r: Row): ApiKeyRecord {
  return {
    id: col.str(r, 'id'),
    prefix: col.str(r, 'prefix'),
    role: col.str(r, 'role') as KeyRole,
    tenant: r.tenant == null ? null : col.str(r, 'tenant'),
    label: r.label == null ? null : col.str(r, 'label'),
    createdAt: col.date(r, 'created_at'),
    createdBy: r.created_by == null ? null : col.str(r, 'created_by'),
    revokedAt: r.revoked_at == null ? null : col.date(r, 'revoked_at'),
  };
}

/** What authenticating a key needs in one read: the key and whether its tenant is disabled. */
export interface KeyLookup extends ApiKeyRecord {
  tenantDisabled: boolean;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const apiKeysRepository = {
  async insert(
    c: SqlQueryable,
    k: { hash: string; prefix: string; role: KeyRole; tenant: string | null; label: string | null; createdBy: string },
  ): Promise<ApiKeyRecord> {
    const rows = await c.query(
      `INSERT INTO api_keys (key_hash, prefix, role, tenant, label, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [k.hash, k.prefix, k.role, k.tenant, k.label, k.createdBy],
    );
    return toKey(firstRow(rows, 'api key insert'));
  },

  /** A tenant's keys, or (tenant null) the admin keys. */
  async list(c: SqlQueryable, tenant: string | null): Promise<ApiKeyRecord[]> {
    const rows = tenant
      ? await c.query(`SELECT ${COLUMNS} FROM api_keys WHERE tenant = $1 ORDER BY created_at, id`, [tenant])
      : await c.query(`SELECT ${COLUMNS} FROM api_keys WHERE tenant IS NULL ORDER BY created_at, id`);
    return rows.map(toKey);
  },

  /** The key with this id under this tenant (null tenant: an admin key); null when there is none. */
  async get(c: SqlQueryable, id: string, tenant: string | null): Promise<ApiKeyRecord | null> {
    if (!UUID_RE.test(id)) return null;
    const rows = await c.query(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1 AND tenant IS NOT DISTINCT FROM $2`, [id, tenant]);
    return rows[0] ? toKey(rows[0]) : null;
  },

  /** Sets revoked_at once (a second revoke keeps the first time). */
  async revoke(c: SqlQueryable, id: string): Promise<ApiKeyRecord | null> {
    const rows = await c.query(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${COLUMNS}`, [id]);
    return rows[0] ? toKey(rows[0]) : null;
  },

  async findByHash(c: SqlQueryable, hash: string): Promise<KeyLookup | null> {
    const rows = await c.query(
      `SELECT k.id, k.prefix, k.role, k.tenant, k.label, k.created_at, k.created_by, k.revoked_at,
              (t.disabled_at IS NOT NULL) AS tenant_disabled
       FROM api_keys k LEFT JOIN tenants t ON t.id = k.tenant WHERE k.key_hash = $1`,
      [hash],
    );
    return rows[0] ? { ...toKey(rows[0]), tenantDisabled: rows[0].tenant_disabled === true } : null;
  },

  /** Hashes of a tenant's keys with their state, for a gateway's key cache. */
  async tenantKeyHashes(c: SqlQueryable, tenant: string): Promise<Array<{ hash: string; revoked: boolean }>> {
    const rows = await c.query('SELECT key_hash, revoked_at FROM api_keys WHERE tenant = $1', [tenant]);
    return rows.map((r) => ({ hash: col.str(r, 'key_hash'), revoked: r.revoked_at != null }));
  },
};
