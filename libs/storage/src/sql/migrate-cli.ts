// `node libs/storage/dist/sql/migrate-cli.js`: applies pending migrations to MIGRATION_DATABASE_URL
// when set (a direct URL, past a pooler), else to DATABASE_URL, or to the embedded PGlite under
// DATA_DIR when neither is set; exits non-zero on any failure.
import { PgSqlClient } from './pg-sql.client';
import { PgliteSqlClient, pgliteDir } from './pglite-sql.client';
import { migrate } from './migrate';
import { postgresTls } from './pg-tls';
import type { SqlClient } from './sql-client';

const line = (level: string, msg: string, fields: Record<string, unknown> = {}) =>
  process.stderr.write(JSON.stringify({ t: new Date().toISOString(), level, msg, ...fields }) + '\n');

/** Which variable names the database: the migration URL wins, so the failure line can say which. */
function urlVariable(env: NodeJS.ProcessEnv): 'MIGRATION_DATABASE_URL' | 'DATABASE_URL' | undefined {
  if (env.MIGRATION_DATABASE_URL?.trim()) return 'MIGRATION_DATABASE_URL';
  return env.DATABASE_URL?.trim() ? 'DATABASE_URL' : undefined;
}

/**
 * That variable's URL with libpq's PGSSL* variables folded in; a URL that is not Postgres, or a
 * TLS file it cannot read, stops the run, named.
 */
function databaseUrl(env: NodeJS.ProcessEnv, variable: 'MIGRATION_DATABASE_URL' | 'DATABASE_URL'): string {
  const given = (env[variable] ?? '').trim();
  if (!/^postgres(ql)?:\/\//.test(given)) throw new Error(`invalid_url: ${variable}: expected a postgres:// or postgresql:// URL`);
  const tls = postgresTls(given, { rootCert: env.PGSSLROOTCERT, cert: env.PGSSLCERT, key: env.PGSSLKEY, mode: env.PGSSLMODE }, variable);
  if (tls.problems.length > 0) {
    throw new Error(tls.problems.map((p) => `invalid_tls: ${p.variable}=${JSON.stringify(p.value)}: expected ${p.expected}`).join('; '));
  }
  return tls.url;
}

async function main(variable: 'MIGRATION_DATABASE_URL' | 'DATABASE_URL' | undefined): Promise<void> {
  const client: SqlClient = variable
    ? new PgSqlClient({ connectionString: databaseUrl(process.env, variable), max: 1 })
    : await PgliteSqlClient.open({ dataDir: pgliteDir(process.env.DATA_DIR || './data') });
  try {
    const res = await migrate(client, {
      log: { info: (m, f) => line('info', m, f), warn: (m, f) => line('warn', m, f), error: (m, f) => line('error', m, f) },
    });
    line('info', 'migrations complete', { target: client.kind, url: variable, applied: res.applied, current: res.current });
  } finally {
    await client.close();
  }
}

if (require.main === module) {
  // In a container node is PID 1, which ignores SIGTERM unless handled: stop promptly when the Job
  // is deleted or times out. Postgres rolls back the migration in flight when the session drops.
  process.once('SIGTERM', () => {
    line('warn', 'migration interrupted', { signal: 'SIGTERM' });
    process.exit(143);
  });
  const variable = urlVariable(process.env);
  main(variable).catch((err: unknown) => {
    line('error', 'migration failed', { err: err instanceof Error ? err.message : String(err), url: variable });
    process.exit(1);
  });
}
