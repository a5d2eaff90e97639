// The audit log: append-only and hash-chained. Each row's hash covers its canonical content and
// the previous row's hash; audit_head holds the newest row, so verify() catches an edited row (its
// hash), a deleted row (its successor's link) and a deleted tail (the head). Appends serialise on a
// transaction-scoped advisory lock, so the chain order is the commit order. With a seal
// (audit-seal.ts) hashes are keyed and the head is anchored outside the database.
import { createHash } from 'node:crypto';
import { col, firstRow, type Row, type SqlClient, type SqlQueryable } from '../sql/sql-client';
import { KEYED_PREFIX, type AnchoredHead, type AuditSeal } from './audit-seal';

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

/** Plain SHA-256 for a chain without a seal (and the rows written before keyed hashes existed). */
export function auditHash(r: Omit<AuditRecord, 'hash'>, seal?: Pick<AuditSeal, 'mac'>): string {
  const body = auditBody(r);
  return seal ? seal.mac(body) : createHash('sha256').update(body).digest('hex');
}

function auditBody(r: Omit<AuditRecord, 'hash'>): string {
  return canonicalJson([
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
}

/**
 * A row's hash holds: keyed rows against the seal; an unkeyed row only before the first keyed
 * one (the chain as it was before its key existed), and never as the newest row under a seal.
 */
function holds(r: AuditRecord, seal: AuditSeal | undefined, keyedSeen: boolean): boolean {
  if (r.hash.startsWith(KEYED_PREFIX)) return seal !== undefined && seal.mac(auditBody(r)) === r.hash;
  return !keyedSeen && auditHash(r) === r.hash;
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
  async append(c: SqlQueryable, e: AuditEntry, seal?: AuditSeal): Promise<AuditRecord & { head: AnchoredHead }> {
    await c.query('SELECT pg_advisory_xact_lock($1, $2)', [...LOCK]);
    const head = firstRow(await c.query('SELECT last_hash, rows FROM audit_head WHERE id = 1'), 'audit_head');
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
    const hash = auditHash(rec, seal);
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
    return { ...rec, hash, head: { id, hash, rows: col.num(head, 'rows') + 1 } };
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
  async verify(c: SqlQueryable, seal?: AuditSeal): Promise<AuditVerdict> {
    const anchored = (await seal?.anchor?.read()) ?? null;
    const head = firstRow(await c.query('SELECT last_id, last_hash, rows FROM audit_head WHERE id = 1'), 'audit_head');
    const walk = { prev: '', lastId: 0, checked: 0, keyed: false, anchorSeen: !anchored || anchored.rows === 0 };
    for (;;) {
      const page = (await c.query(`SELECT ${COLUMNS} FROM audit_log WHERE id > $1 ORDER BY id LIMIT $2`, [walk.lastId, PAGE])).map(
        toRecord,
      );
      for (const r of page) {
        walk.checked++;
        if (r.prevHash !== walk.prev || !holds(r, seal, walk.keyed)) return { ok: false, checked: walk.checked, first_bad_id: r.id };
        walk.keyed ||= r.hash.startsWith(KEYED_PREFIX);
        if (r.id === anchored?.id) walk.anchorSeen ||= r.hash === anchored.hash && walk.checked === anchored.rows;
        walk.prev = r.hash;
        walk.lastId = r.id;
      }
      if (page.length < PAGE) break;
    }
    return verdictAtEnd(walk, head, seal !== undefined, anchored);
  },
};

/** The walk's end against the head in the database and, under a seal, the head outside it. */
function verdictAtEnd(
  w: { prev: string; lastId: number; checked: number; keyed: boolean; anchorSeen: boolean },
  head: Row,
  sealed: boolean,
  anchored: AnchoredHead | null,
): AuditVerdict {
  const { checked } = w;
  // A deleted tail leaves an intact chain that simply ends early: the head says where it ended.
  if (w.lastId !== col.num(head, 'last_id') || w.prev !== col.str(head, 'last_hash') || checked !== col.num(head, 'rows')) {
    return { ok: false, checked, first_bad_id: col.num(head, 'last_id') };
  }
  // Under a seal the newest row is keyed (the first use seals an older chain), and the chain
  // still holds the head recorded outside the database: a wiped or rewound log fails here.
  if (sealed && checked > 0 && !w.keyed) return { ok: false, checked, first_bad_id: w.lastId };
  if (!w.anchorSeen) return { ok: false, checked, first_bad_id: anchored?.id ?? 0 };
  return { ok: true, checked };
}

/**
 * At boot under a seal: a chain that is empty or ends in an unkeyed row gets a keyed
 * `audit.sealed` row, so from here on every row is keyed and the anchor has a head to hold.
 */
export async function sealAuditChain(sql: SqlClient, seal: AuditSeal): Promise<void> {
  const rec = await sql.transaction(async (tx) => {
    const head = firstRow(await tx.query('SELECT last_hash, rows FROM audit_head WHERE id = 1'), 'audit_head');
    if (col.str(head, 'last_hash').startsWith(KEYED_PREFIX)) return null;
    return auditRepository.append(tx, { actor: 'system', action: 'audit.sealed', detail: { unkeyed_rows: col.num(head, 'rows') } }, seal);
  });
  if (rec) await seal.anchor?.advance(rec.head);
}
