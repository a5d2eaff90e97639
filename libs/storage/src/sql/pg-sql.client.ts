// SqlClient over a pg Pool; int8 parsed as number per pool (not globally) to match PGlite.
import { Pool, types as pgTypes, type PoolClient, type PoolConfig } from 'pg';
import { errorText, silentLogger, type StorageLogger } from '../storage-logger';
import { sqlCall } from '../storage-errors';
import { inTransaction, type Row, type SqlClient, type SqlQueryable } from './sql-client';

export interface PgSqlClientOptions {
  connectionString: string;
  /** Schema every session uses first (tests use a fresh one per run). */
  schema?: string;
  max?: number;
  connectTimeoutMs?: number;
  log?: StorageLogger;
}

const INT8_OID = 20;
const poolTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (v: string) => Number(v);
    return format === 'binary' ? pgTypes.getTypeParser(oid, 'binary') : pgTypes.getTypeParser(oid, 'text');
  },
} as PoolConfig['types'];

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function session(c: PoolClient | Pool): SqlQueryable {
  return {
    async query<R extends Row>(text: string, params?: readonly unknown[]): Promise<R[]> {
      const res = await sqlCall('postgres', c.query(text, params as unknown[] | undefined));
      return res.rows as R[];
    },
    async exec(sql: string): Promise<void> {
      await sqlCall('postgres', c.query(sql));
    },
  };
}

export class PgSqlClient implements SqlClient {
  readonly kind = 'postgres';
  private readonly pool: Pool;
  private readonly direct: SqlQueryable;

  constructor(o: PgSqlClientOptions) {
    const log = o.log ?? silentLogger;
    this.pool = new Pool({
      connectionString: o.connectionString,
      max: o.max ?? 10,
      connectionTimeoutMillis: o.connectTimeoutMs ?? 5000,
      types: poolTypes,
      // search_path as a startup parameter: every pooled session sees the same schema.
      ...(o.schema ? { options: `-c search_path=${quoteIdent(o.schema)}` } : {}),
    });
    // An idle client losing its server must not crash the process; the pool replaces it.
    this.pool.on('error', (err) => log.warn('postgres idle client error', { err: errorText(err) }));
    this.direct = session(this.pool);
  }

  query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<R[]> {
    return this.direct.query<R>(text, params);
  }

  exec(sql: string): Promise<void> {
    return this.direct.exec(sql);
  }

  async withConnection<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
    const client = await sqlCall('postgres', this.pool.connect());
    let broken: Error | undefined;
    // pg emits 'error' on a checked-out client whose socket dies (as well as failing its query);
    // with no listener that event would crash the process. The query's rejection reports it.
    const onError = (err: Error) => (broken ??= err);
    client.on('error', onError);
    try {
      return await fn(session(client));
    } catch (err) {
      broken = err instanceof Error ? err : new Error(String(err));
      throw err;
    } finally {
      // A failed session may hold locks or an aborted transaction: destroy it, never reuse it.
      client.off('error', onError);
      client.release(broken);
    }
  }

  transaction<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
    return this.withConnection((c) => inTransaction(c, fn));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
