// Which sessions and kept marks a durable store MAY hold, when one client object is its only
// writer (PGlite: one process per data directory, one client per process). Every key written
// through that client is added before its statement runs, and the rows stored before this
// process began are added by one paged scan; until that scan is through, everything "may" be
// there. So a key it says is absent has no row: a first-sight look-up of a session that is new
// to the store can be answered without a statement. It is a Bloom filter (bounded memory, no
// false negatives): a false positive costs the look-up it would have cost anyway, and its rate
// climbs slowly with the keys added (≈ 2 % at a million).
//
// Not for Postgres: there other replicas write the same tables, and a session this replica has
// never seen may have been checkpointed by another one minutes ago (its hot copy lost since).
import { col, type Row, type SqlClient, type SqlQueryable } from './sql-client';

const BITS_LOG2 = 23; // 1 MiB of bits
const HASHES = 6;
/** Rows per page of the boot scan: each page is one statement, so the loop is never held long. */
const SCAN_PAGE = 2000;
/** A failed scan is tried again on a later look-up, no sooner than this. */
const RESCAN_AFTER_MS = 30_000;

type ScanState = 'idle' | 'scanning' | 'done' | 'failed';

export const sessionKey = (tenant: string, session: string): string => `s\u0000${tenant}\u0000${session}`;
export const keptKey = (tenant: string, contentKey: string): string => `k\u0000${tenant}\u0000${contentKey}`;

/** Two independent 32-bit hashes of a string (FNV-1a and a multiply-xorshift), for double hashing. */
function hashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return [a >>> 0, (b | 1) >>> 0];
}

export class PresenceFilter {
  private readonly bits = new Int32Array(1 << (BITS_LOG2 - 5));
  private readonly mask = (1 << BITS_LOG2) - 1;
  private state: ScanState = 'idle';
  private failedAt = 0;

  constructor(private readonly now: () => number = Date.now) {}

  add(key: string): void {
    const [a, b] = hashes(key);
    for (let i = 0; i < HASHES; i++) {
      const bit = (a + Math.imul(i, b)) & this.mask;
      this.bits[bit >>> 5] = (this.bits[bit >>> 5] ?? 0) | (1 << (bit & 31));
    }
  }

  /** False only when no row with this key can exist. */
  mayHold(key: string): boolean {
    if (this.state !== 'done') return true;
    const [a, b] = hashes(key);
    for (let i = 0; i < HASHES; i++) {
      const bit = (a + Math.imul(i, b)) & this.mask;
      if (((this.bits[bit >>> 5] ?? 0) & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }

  get scanned(): boolean {
    return this.state === 'done';
  }

  /** Starts the boot scan unless it ran, is running, or failed lately (then it is retried later). */
  scanOnce(sql: SqlQueryable): void {
    if (this.state === 'scanning' || this.state === 'done') return;
    if (this.state === 'failed' && this.now() - this.failedAt < RESCAN_AFTER_MS) return;
    this.state = 'scanning';
    scanStoredKeys(sql, (k) => this.add(k)).then(
      () => (this.state = 'done'),
      () => {
        this.state = 'failed';
        this.failedAt = this.now();
      },
    );
  }
}

/** Every table a first-sight look-up reads, with the key its rows answer to. */
const SCANS = [
  { table: 'session_turn', second: 'session', key: sessionKey },
  { table: 'session_state', second: 'session', key: sessionKey },
  { table: 'session_checkpoint', second: 'session', key: sessionKey },
  { table: 'kept', second: 'content_key', key: keptKey },
] as const;

/** Adds the key of every stored row, past retention or not (a stale positive only costs a look-up). */
async function scanStoredKeys(sql: SqlQueryable, add: (key: string) => void): Promise<void> {
  for (const s of SCANS) {
    let after: [string, string] | null = null;
    for (;;) {
      // Keyset paging along the primary key's leading columns, so each page is an index range.
      const rows: Row[] = await sql.query(
        `SELECT DISTINCT tenant, ${s.second} AS k FROM ${s.table}
          ${after ? `WHERE (tenant, ${s.second}) > ($1, $2)` : ''} ORDER BY tenant, k LIMIT ${SCAN_PAGE}`,
        after ?? [],
      );
      for (const r of rows) add(s.key(col.str(r, 'tenant'), col.str(r, 'k')));
      const last: Row | undefined = rows.at(-1);
      if (rows.length < SCAN_PAGE || !last) break;
      after = [col.str(last, 'tenant'), col.str(last, 'k')];
    }
  }
}

/** One filter per client object, whatever number of stores share it. */
const presenceByClient = new WeakMap<SqlClient, PresenceFilter>();

/** No row of this session can exist: the exclusive client never wrote it nor found it at boot. */
export function surelyNew(p: PresenceFilter, sql: SqlClient, tenant: string, session: string): boolean {
  p.scanOnce(sql);
  return !p.mayHold(sessionKey(tenant, session));
}

/** The filter of an exclusive client (undefined for a shared one: other writers exist). */
export function presenceOf(sql: SqlClient): PresenceFilter | undefined {
  if (!sql.exclusive) return undefined;
  let p = presenceByClient.get(sql);
  if (!p) presenceByClient.set(sql, (p = new PresenceFilter()));
  return p;
}
