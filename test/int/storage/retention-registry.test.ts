// The retention registry against the live schema after every migration, on the real Postgres 15 and
// PGlite: every table has a policy (a table planted here without one is reported), every policy
// names a table and a column that exist, and the partitioned policies are partitioned tables.
import { RETENTION, tablesWithoutPolicy, type SqlClient } from '@context-guru/storage';
import { openMigrated, SQL_BACKENDS } from './sql-backends';

jest.setTimeout(60_000);

describe.each(SQL_BACKENDS)('retention registry on %s', (_name, backend) => {
  let sql: SqlClient;

  beforeAll(async () => {
    sql = await openMigrated(backend);
  });
  afterAll(async () => {
    await backend.dispose(sql);
  });

  it('names a policy for every table the migrations create', async () => {
    expect(await tablesWithoutPolicy(sql)).toEqual([]);
  });

  it('reports a table that has none', async () => {
    await sql.exec('CREATE TABLE planted_without_policy (id int PRIMARY KEY, at timestamptz)');
    try {
      expect(await tablesWithoutPolicy(sql)).toEqual(['planted_without_policy']);
    } finally {
      await sql.exec('DROP TABLE planted_without_policy');
    }
  });

  it('names only tables and columns that exist, and partitions only partitioned tables', async () => {
    const tables = await sql.query(
      `SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition`,
    );
    const kind = new Map(tables.map((t) => [t.relname as string, t.relkind as string]));
    for (const [table, policy] of Object.entries(RETENTION)) {
      expect([table, kind.has(table)]).toEqual([table, true]);
      if (policy.kind === 'kept') continue;
      expect([table, kind.get(table)]).toEqual([table, policy.kind === 'partitions' ? 'p' : 'r']);
      const cols = await sql.query(
        'SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2',
        [table, policy.column],
      );
      // A partition key is a date; a batched delete compares a timestamp with its horizon, unless
      // it says how it compares (a day bucket).
      const type = policy.kind === 'partitions' ? 'date' : policy.where ? 'date' : 'timestamp with time zone';
      expect([table, policy.column, cols.map((c) => c.data_type)]).toEqual([table, policy.column, [type]]);
    }
  });
});
