// The audit log: append-only and hash-chained. Each row's hash covers its canonical content and
// the previous row's hash; audit_head holds the newest row, so verify() catches an edited row (its
// hash), a deleted row (its successor's link) and a deleted tail (the head). Appends serialise on a
// transaction-scoped advisory lock, so the chain order is the commit order.
import { createHash } from 'node:crypto';
import { col, firstRow, type Row, type SqlQueryable } from '../sql/sql-client';

export interface AuditEntry {
  actor: string;
  action: string;
  tenant?: string | null;
  /** What the action touched: a key id, a version, the hash of an ops expand. */
  target?: string | null;
  reason?: string | null;
  before?: unknown;
  after?: unknown;
  detail?: Record<string, unknown>;
}

export interface AuditRecord {
  id: number;
  at: Date;
  actor: string;
  action: string;
  tenant: string | null;
  target: string | null;
  reason: string | null;
  before: unknown;
  after: unknown;
  detail: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

export interface AuditVerdict {
  ok: boolean;
  checked: number;
  first_bad_id?: number;
}

const LOCK = [0x6367, 0x6175] as const; // "cg", "au"
const COLUMNS = 'id, at, actor, action, tenant, target, reason, before, after, detail, prev_hash, hash';
const PAGE = 1000;

/** JSON with object keys sorted at every level: jsonb does not keep key order. */
export function canonicalJson(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (typeof v === 'object' && !(v instanceof Date)) {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

export function auditHash(r: Omit<AuditRecord, 'hash'>): string {
  const body = canonicalJson([
    r.id,
    r.at.toISOString(),
    r.actor,
    r.action,
    r.tenant,
    r.target,
    r.reason,
    r.before,
    r.after,
    r.detail,
    r.prevHash,
  ]);
  return createHash('sha256').update(body).digest('hex');
}

function toRecord(r: Row): AuditRecord {
  const opt = (k: string) => (r[k] == null ? null : col.str(r, k));
  return {
    id: col.num(r, 'id'),
    at: col.date(r, 'at'),
    actor: col.str(r, 'actor'),
    action: col.str(r, 'action'),
    tenant: opt('tenant'),
    target: opt('target'),
    reason: opt('reason'),
    before: r.before ?? null,
    after: r.after ?? null,
    detail: (r.detail ?? {}) as Record<string, unknown>,
    prevHash: col.str(r, 'prev_hash'),
    hash: col.str(r, 'hash'),
  };
}

/** Round-trips a value through JSON so what is hashed is what jsonb gives back. */
const plain = (v: unknown): unknown => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
const jsonParam = (v: unknown): string | null => (v === null ? null : JSON.stringify(v));

export const auditRepository = {
  /** Appends one row; call inside the transaction of the change it records. */
  async append(c: SqlQueryable, e: AuditEntry): Promise<AuditRecord> {
    await c.query('SELECT pg_advisory_xact_lock($1, $2)', [...LOCK]);
    const head = firstRow(await c.query('SELECT last_hash FROM audit_head WHERE id = 1'), 'audit_head');
    const id = col.num(firstRow(await c.query("SELECT nextval(pg_get_serial_sequence('audit_log', 'id')) AS id"), 'audit id'), 'id');
    const rec: Omit<AuditRecord, 'hash'> = {
      id,
      // Millisecond precision, so the timestamp read back hashes like the one written.
      at: new Date(Date.now()),
      actor: e.actor,
      action: e.action,
      tenant: e.tenant ?? null,
      target: e.target ?? null,
      reason: e.reason ?? null,
      before: plain(e.before),
      after: plain(e.after),
      detail: plain(e.detail ?? {}) as Record<string, unknown>,
      prevHash: col.str(head, 'last_hash'),
    };
    const hash = auditHash(rec);
    await c.query(
      `INSERT INTO audit_log (id, at, actor, action, tenant, target, reason, before, after, detail, prev_hash, hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10::jsonb, $11, $12)`,
      [
        id,
        rec.at,
        rec.actor,
        rec.action,
        rec.tenant,
        rec.target,
        rec.reason,
        jsonParam(rec.before),
        jsonParam(rec.after),
        JSON.stringify(rec.detail),
        rec.prevHash,
        hash,
      ],
    );
    await c.query('UPDATE audit_head SET last_id = $1, last_hash = $2, rows = rows + 1 WHERE id = 1', [id, hash]);
    return { ...rec, hash };
  },

  /** Newest first. */
  async list(c: SqlQueryable, q: { tenant?: string; action?: string; limit: number }): Promise<AuditRecord[]> {
    const rows = await c.query(
      `SELECT ${COLUMNS} FROM audit_log
       WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text IS NULL OR action = $2)
       ORDER BY id DESC LIMIT $3`,
      [q.tenant ?? null, q.action ?? null, q.limit],
    );
    return rows.map(toRecord);
  },

  /** Walks the whole chain oldest first, a page at a time. */
  async verify(c: SqlQueryable): Promise<AuditVerdict> {
    const head = firstRow(await c.query('SELECT last_id, last_hash, rows FROM audit_head WHERE id = 1'), 'audit_head');
    let prev = '';
    let lastId = 0;
    let checked = 0;
    for (;;) {
      const page = (await c.query(`SELECT ${COLUMNS} FROM audit_log WHERE id > $1 ORDER BY id LIMIT $2`, [lastId, PAGE])).map(toRecord);
      for (const r of page) {
        checked++;
        if (r.prevHash !== prev || auditHash(r) !== r.hash) return { ok: false, checked, first_bad_id: r.id };
        prev = r.hash;
        lastId = r.id;
      }
      if (page.length < PAGE) break;
    }
    // A deleted tail leaves an intact chain that simply ends early: the head says where it ended.
    if (lastId !== col.num(head, 'last_id') || prev !== col.str(head, 'last_hash') || checked !== col.num(head, 'rows')) {
      return { ok: false, checked, first_bad_id: col.num(head, 'last_id') };
    }
    return { ok: true, checked };
  },
};
