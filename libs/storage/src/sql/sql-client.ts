// One query surface over Postgres (pg) and PGlite, normalised so callers see the same JS types:
// int8 → number, bytea → Buffer, timestamptz → Date, json/jsonb → parsed value.

export type Row = Record<string, unknown>;

export interface SqlQueryable {
  /** One parameterised statement ($1, $2, …); returns its rows. */
  query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface SqlClient extends SqlQueryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * True when this client object is the only writer of its database (PGlite: one process per
   * data directory, one client per process), so what it has not written since boot and did not
   * find at boot is not there. Postgres, shared by replicas, never is.
   */
  readonly exclusive?: boolean;
  /** Runs fn on one dedicated session (session-level advisory locks need it); exclusive on PGlite. */
  withConnection<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T>;
  /** BEGIN … COMMIT around fn on one session; ROLLBACK when fn throws. */
  transaction<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Runs fn inside BEGIN/COMMIT on a session that already is dedicated to the caller. */
export async function inTransaction<T>(c: SqlQueryable, fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
  await c.exec('BEGIN');
  try {
    const out = await fn(c);
    await c.exec('COMMIT');
    return out;
  } catch (err) {
    await c.exec('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Uint8Array (PGlite) → Buffer (pg's shape), recursively through plain rows. */
export function normaliseValue(v: unknown): unknown {
  if (v instanceof Uint8Array && !Buffer.isBuffer(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (typeof v === 'bigint') return Number(v);
  return v;
}

export function normaliseRow<R extends Row>(row: Row): R {
  const out: Row = {};
  for (const k of Object.keys(row)) out[k] = normaliseValue(row[k]);
  return out as R;
}

/**
 * The row a statement always returns (INSERT … RETURNING, an aggregate, the singleton row of a
 * table the migrations seed): none means the schema is not what this code expects, so say which.
 */
export function firstRow<R extends Row>(rows: readonly R[], what: string): R {
  const [row] = rows;
  if (row === undefined) throw new Error(`${what}: the statement returned no row`);
  return row;
}

/** Typed field readers: rows are `unknown` until read through these. */
export const col = {
  str(row: Row, k: string): string {
    const v = row[k];
    if (typeof v !== 'string') throw new TypeError(`column ${k}: expected text, got ${typeof v}`);
    return v;
  },
  num(row: Row, k: string): number {
    const v = row[k];
    const n = typeof v === 'string' ? Number(v) : v;
    if (typeof n !== 'number' || Number.isNaN(n)) throw new TypeError(`column ${k}: expected a number`);
    return n;
  },
  bool(row: Row, k: string): boolean {
    const v = row[k];
    if (typeof v !== 'boolean') throw new TypeError(`column ${k}: expected boolean`);
    return v;
  },
  bytes(row: Row, k: string): Buffer {
    const v = row[k];
    if (!(v instanceof Uint8Array)) throw new TypeError(`column ${k}: expected bytea`);
    return Buffer.isBuffer(v) ? v : Buffer.from(v);
  },
  date(row: Row, k: string): Date {
    const v = row[k];
    if (!(v instanceof Date)) throw new TypeError(`column ${k}: expected timestamptz`);
    return v;
  },
};
