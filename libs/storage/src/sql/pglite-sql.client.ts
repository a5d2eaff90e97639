// SqlClient over an embedded PGlite (PostgreSQL 18 in WASM): one session, so exclusive sections
// are serialised in-process; rows are normalised to the pg shapes (bytea → Buffer).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { PGlite } from '@electric-sql/pglite';
import { sqlCall } from '../storage-errors';
import { lockDataDir } from './data-dir-lock';
import { inTransaction, normaliseRow, type Row, type SqlClient, type SqlQueryable } from './sql-client';

/** Where the embedded durable store lives under DATA_DIR (the factory and the migrate CLI agree). */
export function pgliteDir(dataDir: string): string {
  return path.resolve(dataDir, 'pglite');
}

export interface PgliteSqlClientOptions {
  /** Directory of the database files; omitted → in memory (lost at close). */
  dataDir?: string;
}

/**
 * Memory settings for a store that holds session state, not analytics: PostgreSQL's defaults
 * (128 MB of shared buffers, 4 MB per sort) sized the embedded process far past its budget.
 * Shared buffers are resident in full from boot (PGlite's linear memory: 29 MB at 16MB, 17 MB at
 * 4MB); a page outside them is read back from the data directory's files, in the OS page cache.
 */
const MEMORY_PARAMS = [
  '-c',
  'shared_buffers=4MB',
  '-c',
  'work_mem=2MB',
  '-c',
  'maintenance_work_mem=8MB',
  '-c',
  'temp_buffers=2MB',
  '-c',
  'wal_buffers=1MB',
  // One session ever connects, and nothing replicates: PostgreSQL sizes its shared memory (lock
  // tables, per-backend slots) by these counts, which PGlite keeps resident in its linear memory.
  '-c',
  'max_connections=2',
  '-c',
  'max_wal_senders=0',
  '-c',
  'max_replication_slots=0',
  '-c',
  'autovacuum_max_workers=1',
];

/**
 * Creating a database runs initdb, whose WASM instance and file bundle (≈ 450 MB) the process
 * never gives back; so a new data directory is initialised in a short-lived child process and the
 * serving process only ever opens an existing one.
 */
async function initialiseInChild(dataDir: string, startParams: readonly string[]): Promise<void> {
  const script = `const { PGlite } = require(process.argv[1]);
PGlite.create({ dataDir: process.argv[2], startParams: JSON.parse(process.argv[3]) })
  .then((db) => db.close())
  .then(() => process.exit(0), (err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });`;
  await promisify(execFile)(
    process.execPath,
    ['-e', script, require.resolve('@electric-sql/pglite'), dataDir, JSON.stringify(startParams)],
    { timeout: 120_000 },
  );
}

/** A FIFO mutex: PGlite has one session, so an exclusive section must not interleave with another. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

export class PgliteSqlClient implements SqlClient {
  readonly kind = 'pglite';
  /** The data directory's lock admits one open client, in one process (an in-memory one is private). */
  readonly exclusive = true;
  private readonly lock = new Mutex();
  private constructor(
    private readonly db: Pick<PGlite, 'query' | 'exec' | 'close'>,
    private readonly unlock: () => void,
  ) {}

  /**
   * Opens (and creates when missing) the database; takes ~2.7 s, so share one per process. A
   * directory another live process holds is refused at once (DataDirLockedError).
   */
  static async open(o: PgliteSqlClientOptions = {}): Promise<PgliteSqlClient> {
    const unlock = o.dataDir ? lockDataDir(o.dataDir) : () => undefined;
    try {
      const { PGlite } = await import('@electric-sql/pglite');
      const startParams = [...PGlite.defaultStartParams, ...MEMORY_PARAMS];
      // Under the lock, so two processes never initialise the same directory.
      if (o.dataDir && !existsSync(path.join(o.dataDir, 'PG_VERSION'))) await initialiseInChild(o.dataDir, startParams);
      // No V8 flags around this compile: toggling --liftoff-only here (for a smaller RSS) left the
      // process's GC running full collections every ~200 ms under load (pglite-v8-flags.test.ts).
      const db = o.dataDir ? await PGlite.create({ dataDir: o.dataDir, startParams }) : await PGlite.create({ startParams });
      await db.waitReady;
      return new PgliteSqlClient(db, unlock);
    } catch (err) {
      unlock();
      throw err;
    }
  }

  private readonly raw: SqlQueryable = {
    query: async <R extends Row>(text: string, params?: readonly unknown[]): Promise<R[]> => {
      const res = await sqlCall('the embedded database', this.db.query<Row>(text, params ? [...params] : undefined));
      return res.rows.map((r) => normaliseRow<R>(r));
    },
    exec: async (sql: string): Promise<void> => {
      await sqlCall('the embedded database', this.db.exec(sql));
    },
  };

  // Every statement goes through the lock so none lands inside another caller's BEGIN … COMMIT
  // on the shared session (PGlite serialises execution anyway, so this costs no throughput).
  query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<R[]> {
    return this.lock.run(() => this.raw.query<R>(text, params));
  }

  exec(sql: string): Promise<void> {
    return this.lock.run(() => this.raw.exec(sql));
  }

  withConnection<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
    return this.lock.run(() => fn(this.raw));
  }

  transaction<T>(fn: (c: SqlQueryable) => Promise<T>): Promise<T> {
    return this.withConnection((c) => inTransaction(c, fn));
  }

  async close(): Promise<void> {
    try {
      await this.lock.run(() => this.db.close());
    } finally {
      this.unlock();
    }
  }
}
