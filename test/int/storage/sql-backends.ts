// Test backends for the durable store: a fresh schema on the real Postgres, and an in-memory PGlite.
import { PgSqlClient, PgliteSqlClient, migrate, type SqlClient } from '@context-guru/storage';

export const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

export interface SqlBackend {
  name: 'postgres' | 'pglite';
  /** An empty database (pg: a new schema; PGlite: a new in-memory instance). */
  open(): Promise<SqlClient>;
  /** Another client on the same database (pg: a second pool; PGlite: the same instance). */
  second(first: SqlClient): Promise<SqlClient>;
  /** Drops what open() created. */
  dispose(client: SqlClient): Promise<void>;
}

let n = 0;
const schemas = new WeakMap<SqlClient, string>();

export const postgresBackend: SqlBackend = {
  name: 'postgres',
  async open() {
    const schema = `cg_test_${process.pid}_${Date.now().toString(36)}_${n++}`;
    const admin = new PgSqlClient({ connectionString: DATABASE_URL, max: 1 });
    await admin.exec(`CREATE SCHEMA "${schema}"`);
    await admin.close();
    const c = new PgSqlClient({ connectionString: DATABASE_URL, schema, max: 4 });
    schemas.set(c, schema);
    return c;
  },
  async second(first) {
    return new PgSqlClient({ connectionString: DATABASE_URL, schema: schemas.get(first)!, max: 2 });
  },
  async dispose(c) {
    const schema = schemas.get(c);
    await c.close();
    const admin = new PgSqlClient({ connectionString: DATABASE_URL, max: 1 });
    await admin.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.close();
  },
};

const pgliteBackend: SqlBackend = {
  name: 'pglite',
  open: () => PgliteSqlClient.open(),
  async second(first) {
    return first;
  },
  async dispose(c) {
    await c.close();
  },
};

/** Both backends, for `describe.each(SQL_BACKENDS)('… on %s', (_name, backend) => …)`. */
export const SQL_BACKENDS: Array<[string, SqlBackend]> = [
  ['postgres', postgresBackend],
  ['pglite', pgliteBackend],
];

/** An empty database with the schema migrated. */
export async function openMigrated(backend: SqlBackend): Promise<SqlClient> {
  const sql = await backend.open();
  await migrate(sql);
  return sql;
}
