// A fresh Postgres database per test file on the server DATABASE_URL names (CI's, or the local
// one), so tests that share a store never share rows; dropped (connections and all) on drop().
import { Client } from 'pg';

const BASE_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface FreshDatabase {
  url: string;
  drop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const admin = new Client({ connectionString: BASE_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** `cg_<name>_<pid>_<ms>`: unique across parallel suites and reruns. */
export async function freshDatabase(name: string): Promise<FreshDatabase> {
  const db = `cg_${name}_${process.pid}_${Date.now()}`;
  await adminQuery(`CREATE DATABASE ${db}`);
  const u = new URL(BASE_DATABASE_URL);
  u.pathname = `/${db}`;
  return { url: u.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`) };
}
