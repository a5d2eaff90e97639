// A migrated schema of its own on the shared Postgres, reached through a loopback TCP proxy so a
// test can cut or stall this process's connection (the shared server is never touched).
import { PgSqlClient, migrate } from '@context-guru/storage';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy';
import { DATABASE_URL } from './sql-backends';

export interface ProxiedPostgres {
  proxy: TcpProxy;
  /** A pool over the proxy, on the schema. */
  sql: PgSqlClient;
  /** Restores the connection, drops the schema and closes the proxy (the pool belongs to the test). */
  dispose(): Promise<void>;
}

export async function proxiedPostgres(prefix: string): Promise<ProxiedPostgres> {
  const schema = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  const onAdmin = async (statement: string) => {
    const admin = new PgSqlClient({ connectionString: DATABASE_URL, max: 1 });
    await admin.exec(statement);
    await admin.close();
  };
  await onAdmin(`CREATE SCHEMA "${schema}"`);
  const url = new URL(DATABASE_URL);
  const proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
  url.host = `127.0.0.1:${proxy.port}`;
  const sql = new PgSqlClient({ connectionString: url.toString(), schema, max: 2 });
  await migrate(sql);
  const dispose = async () => {
    proxy.resume();
    await proxy.restore();
    await onAdmin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await proxy.close();
  };
  return { proxy, sql, dispose };
}
