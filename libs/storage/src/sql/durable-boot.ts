// The durable store's boot work — reach the database, then migrate (MIGRATE_ON_BOOT) or read the
// schema — kept apart from the process start: a database that does not answer yet leaves the
// process up and not ready (docs/storage.md; a crash loop under Kubernetes helps nobody), and the work is
// retried until it answers. A database that answers with an error (a wrong password, no such
// database, an edited migration, a certificate the CA does not verify) still fails the boot:
// waiting would not fix it.
import { errorText, type StorageLogger } from '../storage-logger';
import { tlsRefusal } from '../tls-files';
import { migrate, readSchemaStatus, type Migration, type SchemaStatus } from './migrate';
import type { SqlClient } from './sql-client';

export interface DurableBootOptions {
  migrate: boolean;
  /**
   * MIGRATION_DATABASE_URL: a client of its own for each migration (opened here, closed after),
   * so the migration's session is a direct one while the serving pool goes through a pooler.
   * Unset: the serving client migrates (fine through PgBouncer too: the locks are transaction-level).
   */
  openMigrationSql?: () => SqlClient;
  migrations: Migration[];
  log: StorageLogger;
  /** A server that may be down for a while (Postgres): wait for it; an embedded one fails the boot. */
  waitForDatabase: boolean;
  /** Pause between attempts while the database does not answer (default 1 s). */
  retryMs?: number;
  /**
   * How long a current schema is taken for granted (default 30 s): after that the next readiness
   * check reads it again, so a database restored from an older backup (or migrated back) unreadies
   * the pod — or, under MIGRATE_ON_BOOT, is migrated forward again.
   */
  recheckMs?: number;
  now?: () => number;
}

/**
 * The database did not answer: no SQLSTATE at all (refused, reset, timed out, closed), a
 * connection exception (class 08), or a server starting up or shutting down (57P01–57P03).
 */
function databaseDidNotAnswer(err: unknown): boolean {
  // A certificate the CA does not verify, or a server without TLS, answered: waiting fixes neither.
  if (tlsRefusal(err)) return false;
  const e = err as { code?: unknown; severity?: unknown } | null;
  if (typeof e?.code === 'string' && typeof e.severity === 'string') return /^(08|57P0[123])/.test(e.code);
  return true;
}

export class DurableBoot {
  /** The schema last seen current, and when: a dead database later does not unready us. */
  private ok: SchemaStatus | undefined;
  private okAt = 0;
  /** The database answered the boot work once (migrated, or its schema read). */
  private reached = false;
  private attempt: Promise<SchemaStatus> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastFailure = '';

  constructor(
    private readonly sql: SqlClient,
    private readonly o: DurableBootOptions,
  ) {}

  /**
   * The first attempt. A database that does not answer leaves it to a retry every `retryMs`;
   * one that answers with an error, or boot work that fails once it answered, rejects.
   */
  async start(): Promise<void> {
    try {
      await this.sql.query('SELECT 1');
      // The migration URL may name another host (the primary, past the pooler): wait for it alike.
      if (this.o.migrate && this.o.openMigrationSql) await this.onMigrationSql((m) => m.query('SELECT 1'));
    } catch (err) {
      if (!this.o.waitForDatabase || !databaseDidNotAnswer(err)) throw err;
      this.o.log.warn('database unreachable at boot; not ready until it answers', { err: errorText(err) });
      this.timer = setInterval(() => void this.run().catch((e: unknown) => this.failed(e)), this.o.retryMs ?? 1000);
      this.timer.unref();
      return;
    }
    await this.run();
  }

  /** Whether the boot work has reached the database (start() returns early while it does not answer). */
  get answered(): boolean {
    return this.reached;
  }

  /** The schema against this build; rejects while the database has not answered the boot work. */
  async schema(): Promise<SchemaStatus> {
    const now = (this.o.now ?? Date.now)();
    if (this.ok && now - this.okAt < (this.o.recheckMs ?? 30_000)) return this.ok;
    if (!this.reached) return this.run();
    let st: SchemaStatus;
    try {
      st = await readSchemaStatus(this.sql, this.o.migrations);
    } catch (err) {
      // Not answering is an outage (served fail-open), not a schema behind: the last verdict stands.
      if (this.ok && databaseDidNotAnswer(err)) return this.ok;
      throw err;
    }
    if (!st.ok && this.ok) this.o.log.warn('durable schema went back (a restore?); not ready until it is migrated', { ...st });
    this.ok = undefined;
    if (!st.ok && this.o.migrate) return this.run();
    this.remember(st, now);
    return st;
  }

  private remember(st: SchemaStatus, at: number): void {
    if (!st.ok) return;
    this.ok = st;
    this.okAt = at;
  }

  /** A retry that reached the database but whose boot work failed: said once per distinct reason. */
  private failed(err: unknown): void {
    if (databaseDidNotAnswer(err)) return;
    const text = errorText(err);
    if (text !== this.lastFailure) this.o.log.warn('database answered but its boot work failed; still not ready', { err: text });
    this.lastFailure = text;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** `work` on the migration client (its own, closed after, when one is configured). */
  private async onMigrationSql<T>(work: (sql: SqlClient) => Promise<T>): Promise<T> {
    if (!this.o.openMigrationSql) return work(this.sql);
    const own = this.o.openMigrationSql();
    try {
      return await work(own);
    } finally {
      await own.close().catch(() => undefined);
    }
  }

  /** One boot attempt (shared by concurrent callers). */
  private run(): Promise<SchemaStatus> {
    this.attempt ??= this.work().finally(() => (this.attempt = undefined));
    return this.attempt;
  }

  private async work(): Promise<SchemaStatus> {
    const { log, migrations } = this.o;
    await this.sql.query('SELECT 1');
    let st: SchemaStatus;
    if (this.o.migrate) {
      const res = await this.onMigrationSql((m) => migrate(m, { log, migrations }));
      const via = this.o.openMigrationSql ? 'MIGRATION_DATABASE_URL' : undefined;
      log.info('durable store migrated', { store: this.sql.kind, via, applied: res.applied, version: res.current });
      st = { current: res.current, required: Math.max(0, ...migrations.map((m) => m.version)), ok: true };
    } else {
      st = await readSchemaStatus(this.sql, migrations);
      if (!st.ok) log.warn('durable schema is older than this build; not ready until it is migrated', { ...st });
    }
    if (this.timer) {
      log.info('database answered; boot work done', { store: this.sql.kind });
      this.close();
    }
    this.reached = true;
    this.remember(st, (this.o.now ?? Date.now)());
    return st;
  }
}
