// SqlClient over an embedded PGlite (PostgreSQL 18 in WASM): one session, so exclusive sections
// are serialised in-process; rows are normalised to the pg shapes (bytea → Buffer).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
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
 */
const MEMORY_PARAMS = [
  '-c',
  'shared_buffers=16MB',
  '-c',
  'work_mem=2MB',
  '-c',
  'maintenance_work_mem=8MB',
  '-c',
  'temp_buffers=2MB',
  '-c',
  'wal_buffers=1MB',
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

let liftoffOnlyOpens = 0;

/**
 * PGlite's module (9 MB of WASM) is compiled with V8's baseline compiler only (Liftoff). With the
 * optimising tier-up on, the functions PostgreSQL runs hot are recompiled by TurboFan on
 * background threads and that memory stays resident: the embedded process idled at 240–320 MB,
 * 200 MB without it, and the throughput bench's CPU per request did not move (bench/README
 * "memory"). The flag is read when a module is compiled, so it is set around PGlite's
 * instantiation only; WASM compiled outside that window (undici's parser, QuickJS) still tiers up.
 */
async function compiledWithLiftoffOnly<T>(create: () => Promise<T>): Promise<T> {
  if (liftoffOnlyOpens++ === 0) setFlagsFromString('--liftoff-only');
  try {
    return await create();
  } finally {
    if (--liftoffOnlyOpens === 0) setFlagsFromString('--no-liftoff-only');
  }
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
      const db = await compiledWithLiftoffOnly(async () => {
        const created = o.dataDir ? await PGlite.create({ dataDir: o.dataDir, startParams }) : await PGlite.create({ startParams });
        await created.waitReady;
        return created;
      });
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
