// The audit log against someone who can write the database (issue 29): the app's statements
// cannot truncate it or rewind its head, and a superuser who bypasses the triggers (truncate,
// head reset, a chain recomputed with plain SHA-256) still gets `ok: false` from verification,
// because rows are keyed by a key outside the database and the head is anchored outside it.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  KeyRing,
  LocalKeyProvider,
  PgSqlClient,
  SqlDataKeyStore,
  auditRepository,
  auditSealing,
  canonicalJson,
  migrate,
  sealAuditChain,
  type AuditSealing,
} from '@context-guru/storage';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';

jest.setTimeout(60_000);

let db: FreshDatabase;
let sql: PgSqlClient;
let dataDir: string;
let sealing: AuditSealing;

async function append(i: number): Promise<void> {
  const seal = await sealing.get();
  const { head } = await sql.transaction((tx) => auditRepository.append(tx, { actor: 'admin', action: 'test', target: String(i) }, seal));
  await seal.anchor?.advance(head);
}

/** What a forger without the key writes: the old chain's plain SHA-256 over each row's content. */
async function forgeRows(n: number): Promise<void> {
  let prev = '';
  for (let id = 1000; id < 1000 + n; id++) {
    const at = new Date();
    const body = canonicalJson([id, at.toISOString(), 'admin', 'forged', null, null, null, null, null, {}, prev]);
    const hash = createHash('sha256').update(body).digest('hex');
    await sql.query(
      `INSERT INTO audit_log (id, at, actor, action, detail, prev_hash, hash) VALUES ($1, $2, 'admin', 'forged', '{}'::jsonb, $3, $4)`,
      [id, at, prev, hash],
    );
    prev = hash;
  }
  await sql.query('UPDATE audit_head SET last_id = $1, last_hash = $2, rows = $3', [1000 + n - 1, prev, n]);
}

beforeEach(async () => {
  db = await freshDatabase('audit_forgery');
  sql = new PgSqlClient({ connectionString: db.url, max: 1 });
  await migrate(sql);
  dataDir = mkdtempSync(path.join(tmpdir(), 'cg-audit-'));
  const keys = new KeyRing(new LocalKeyProvider(randomBytes(32)), new SqlDataKeyStore(sql));
  sealing = auditSealing(keys, sql, { dataDir }, sealAuditChain);
  for (let i = 0; i < 3; i++) await append(i);
});

afterEach(async () => {
  sealing.close();
  await sql.close();
  await db.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the audit chain against the database', () => {
  it('verifies when untouched (the boot seal row first, then every append keyed)', async () => {
    const seal = await sealing.get();
    expect(await auditRepository.verify(sql, seal)).toEqual({ ok: true, checked: 4 });
    const rows = await auditRepository.list(sql, { limit: 10 });
    expect(rows.map((r) => r.action)).toEqual(['test', 'test', 'test', 'audit.sealed']);
    expect(rows.every((r) => r.hash.startsWith('h1:'))).toBe(true);
  });

  it("the app's statements cannot truncate the log or its head, nor rewind or reset the head", async () => {
    await expect(sql.query('TRUNCATE audit_log')).rejects.toThrow(/TRUNCATE is not allowed/);
    await expect(sql.query('TRUNCATE audit_head')).rejects.toThrow(/TRUNCATE is not allowed/);
    await expect(sql.query("UPDATE audit_head SET last_id = 0, last_hash = '', rows = 0")).rejects.toThrow(/only an append moves the head/);
    await expect(sql.query('DELETE FROM audit_head')).rejects.toThrow(/DELETE is not allowed/);
    expect((await auditRepository.verify(sql, await sealing.get())).ok).toBe(true);
  });

  it('a truncate and a head reset past the triggers (superuser) fail verification: the anchor holds the head', async () => {
    await sql.withConnection(async (c) => {
      await c.query('SET session_replication_role = replica'); // what a superuser does to skip triggers
      await c.query('TRUNCATE audit_log');
      await c.query("UPDATE audit_head SET last_id = 0, last_hash = '', rows = 0");
      await c.query('SET session_replication_role = DEFAULT');
    });
    expect((await auditRepository.verify(sql, await sealing.get())).ok).toBe(false);
  });

  it('a truncated log rewritten as a plain SHA-256 chain, head and all, fails verification', async () => {
    await sql.withConnection(async (c) => {
      await c.query('SET session_replication_role = replica');
      await c.query('TRUNCATE audit_log');
      await c.query("UPDATE audit_head SET last_id = 0, last_hash = '', rows = 0");
      await c.query('SET session_replication_role = DEFAULT');
    });
    await sql.exec('ALTER TABLE audit_head DISABLE TRIGGER audit_head_forward_only');
    await forgeRows(3);
    expect(await auditRepository.verify(sql, await sealing.get())).toMatchObject({ ok: false });
    // Without the seal (the chain as it was before this change) the same forgery verified.
    expect(await auditRepository.verify(sql)).toEqual({ ok: true, checked: 3 });
  });
});
