// Forward-only migrations: numbered SQL files applied once each, in order, each under an advisory
// lock so any number of runners (replicas, a Helm Job) can start at once; edited history is refused.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { StorageError } from '../storage-errors';
import { silentLogger, type StorageLogger } from '../storage-logger';
import { tablesWithoutPolicy } from './retention-registry';
import { col, type SqlClient, type SqlQueryable } from './sql-client';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrateResult {
  applied: string[];
  /** Highest version present in the database after the run. */
  current: number;
}

const FILE_RE = /^(\d{4})_([a-z0-9_]+)\.sql$/;
/** First key of the two-int advisory lock; the second is the schema, so schemas migrate independently. */
const LOCK_CLASS = 0x6367; // "cg"

/** `<repo>/migrations`: the same depth from src/sql and dist/sql; CG_MIGRATIONS_DIR overrides. */
export function defaultMigrationsDir(): string {
  return process.env.CG_MIGRATIONS_DIR || path.resolve(__dirname, '..', '..', '..', '..', 'migrations');
}

export function loadMigrations(dir: string = defaultMigrationsDir()): Migration[] {
  const out: Migration[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.sql')) continue;
    const [, digits, name] = FILE_RE.exec(file) ?? [];
    if (digits === undefined || name === undefined)
      throw new StorageError('migration_invalid', `migration ${file}: name must be NNNN_snake_case.sql`);
    const sql = readFileSync(path.join(dir, file), 'utf8');
    const version = Number(digits);
    if (out.some((x) => x.version === version)) throw new StorageError('migration_invalid', `migration version ${version} appears twice`);
    out.push({ version, name, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  return out.sort((a, b) => a.version - b.version);
}

const LEDGER = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version     integer     PRIMARY KEY,
  name        text        NOT NULL,
  checksum    text        NOT NULL,
  applied_at  timestamptz NOT NULL DEFAULT now()
)`;

/**
 * Each pending migration in a transaction of its own that first takes a transaction-level
 * advisory lock and re-reads the ledger: runners that start together apply each file once, and
 * nothing holds session state between statements, so this works through a transaction-pooling
 * PgBouncer as well as on a direct connection (a session-level lock would be released, or kept,
 * on whichever server connection the pooler handed out).
 */
export async function migrate(client: SqlClient, o: { migrations?: Migration[]; log?: StorageLogger } = {}): Promise<MigrateResult> {
  const migrations = o.migrations ?? loadMigrations();
  const log = o.log ?? silentLogger;
  const applied: string[] = [];
  for (;;) {
    const step = await client.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))', [LOCK_CLASS]);
      await tx.exec(LEDGER);
      const rows = await tx.query('SELECT version, checksum FROM schema_migrations ORDER BY version');
      const done = new Map(rows.map((r) => [col.num(r, 'version'), col.str(r, 'checksum')]));
      for (const m of migrations) {
        const sum = done.get(m.version);
        if (sum !== undefined && sum !== m.checksum)
          throw new StorageError('migration_edited', `migration ${m.version}_${m.name} was edited after it was applied`);
      }
      const next = migrations.find((m) => !done.has(m.version));
      // The file and its ledger row commit together: a failed migration leaves no trace.
      if (next) {
        await tx.exec(next.sql);
        await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
          next.version,
          next.name,
          next.checksum,
        ]);
      }
      return { next, done };
    });
    if (step.next) {
      applied.push(`${String(step.next.version).padStart(4, '0')}_${step.next.name}`);
      log.info('migration applied', { version: step.next.version, name: step.next.name });
      continue;
    }
    const newest = Math.max(0, ...step.done.keys(), ...migrations.map((m) => m.version));
    const known = Math.max(0, ...migrations.map((m) => m.version));
    if (newest > known) log.warn('database schema is newer than this build', { database: newest, build: known });
    // A table nothing bounds grows for ever: say so where the schema is made (retention-registry.ts).
    const unbounded = await tablesWithoutPolicy(client);
    if (unbounded.length > 0) log.warn('tables without a retention policy', { tables: unbounded });
    return { applied, current: newest };
  }
}

export interface SchemaStatus {
  /** Highest version recorded in the database's ledger (0 when nothing was ever applied). */
  current: number;
  /** Highest version this build ships: the schema its code expects. */
  required: number;
  /** current ≥ required: a newer schema is fine (migrations are forward-only and additive). */
  ok: boolean;
}

/**
 * What a process that does not migrate (a Kubernetes app pod; the Helm Job migrates) reports in
 * its readiness: it serves only once the schema has caught up with the code.
 */
export async function readSchemaStatus(client: SqlQueryable, migrations: Migration[] = loadMigrations()): Promise<SchemaStatus> {
  const required = Math.max(0, ...migrations.map((m) => m.version));
  const [ledger] = await client.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
  let current = 0;
  if (ledger?.present === true) {
    const [row] = await client.query('SELECT coalesce(max(version), 0) AS v FROM schema_migrations');
    current = row ? col.num(row, 'v') : 0;
  }
  return { current, required, ok: current >= required };
}
