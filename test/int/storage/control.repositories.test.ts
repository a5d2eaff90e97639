// The control-plane repositories and the generation contract, on the real Postgres and PGlite:
// the same SQL, the same answers.
import {
  InProcessGenerationBus,
  apiKeysRepository,
  auditRepository,
  bumpGeneration,
  composeTenantDocument,
  configsRepository,
  filtersRepository,
  generateKey,
  hashKey,
  loadTenantState,
  readGeneration,
  replicasRepository,
  tenantsRepository,
  type SqlClient,
} from '@context-guru/storage';
import { SQL_BACKENDS, openMigrated } from './sql-backends';

jest.setTimeout(60_000);

describe.each(SQL_BACKENDS)('control repositories on %s', (_name, backend) => {
  let sql: SqlClient;

  beforeAll(async () => {
    sql = await openMigrated(backend);
  });
  afterAll(async () => {
    await backend.dispose(sql);
  });

  it('a change bumps the one generation and stamps its tenant in the same transaction; a rollback leaves both', async () => {
    expect(await readGeneration(sql)).toBe(0);
    const g = await sql.transaction(async (tx) => {
      await tenantsRepository.insert(tx, { id: 'acme', name: 'Acme' });
      return bumpGeneration(tx, 'acme');
    });
    expect(g).toBe(1);
    expect((await tenantsRepository.get(sql, 'acme'))!.generation).toBe(1);
    await expect(
      sql.transaction(async (tx) => {
        await bumpGeneration(tx, 'acme');
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await readGeneration(sql)).toBe(1);
    expect((await tenantsRepository.changedSince(sql, 0)).map((t) => t.id)).toEqual(['acme']);
    expect(await tenantsRepository.changedSince(sql, 1)).toEqual([]);
    expect(await tenantsRepository.insert(sql, { id: 'acme', name: 'again' })).toBeNull();
  });

  it('keys are stored hashed and found by hash with their tenant state', async () => {
    const k = generateKey('tenant');
    expect(k.key).toMatch(/^cg_live_[A-Za-z0-9]{32}$/);
    expect(k.hash).toBe(hashKey(k.key));
    const rec = await apiKeysRepository.insert(sql, {
      hash: k.hash,
      prefix: k.prefix,
      role: 'tenant',
      tenant: 'acme',
      label: 'ci',
      createdBy: 'admin',
    });
    const found = await apiKeysRepository.findByHash(sql, k.hash);
    expect(found).toMatchObject({ id: rec.id, tenant: 'acme', role: 'tenant', revokedAt: null, tenantDisabled: false });
    await tenantsRepository.update(sql, 'acme', { disabled: true });
    expect((await apiKeysRepository.findByHash(sql, k.hash))!.tenantDisabled).toBe(true);
    await tenantsRepository.update(sql, 'acme', { disabled: false });
    await apiKeysRepository.revoke(sql, rec.id);
    expect((await apiKeysRepository.findByHash(sql, k.hash))!.revokedAt).toBeInstanceOf(Date);
    expect(await apiKeysRepository.get(sql, 'not-a-uuid', 'acme')).toBeNull();
    expect(await apiKeysRepository.get(sql, rec.id, null)).toBeNull();
    expect(await apiKeysRepository.tenantKeyHashes(sql, 'acme')).toEqual([{ hash: k.hash, revoked: true }]);
  });

  it('config and filter versions number per tenant, activate one at a time, and compose into the served document', async () => {
    const v1 = await configsRepository.insert(sql, 'acme', { preset: 'safe' }, 'admin');
    const v2 = await configsRepository.insert(
      sql,
      'acme',
      { pipeline: ['cmdfilter'], components: { cmdfilter: { filters: ['inline'] } } },
      'admin',
    );
    expect([v1.version, v2.version]).toEqual([1, 2]);
    await configsRepository.activate(sql, 'acme', 2);
    await configsRepository.activate(sql, 'acme', 1);
    expect((await configsRepository.active(sql, 'acme'))!.version).toBe(1);
    await expect(sql.query(`UPDATE pipeline_configs SET document = '{}'::jsonb WHERE tenant = 'acme'`)).rejects.toThrow(
      /history is immutable/,
    );
    await configsRepository.activate(sql, 'acme', 2);
    await filtersRepository.insert(sql, 'acme', 'pytest', 'a: 1', 'admin');
    const f2 = await filtersRepository.insert(sql, 'acme', 'pytest', 'a: 2', 'admin');
    await filtersRepository.activate(sql, 'acme', 'pytest', f2.version);
    expect(await filtersRepository.summaries(sql, 'acme')).toEqual([{ name: 'pytest', latest: 2, active: 2 }]);
    const state = (await loadTenantState(sql, 'acme'))!;
    expect(state.config!.version).toBe(2);
    expect(state.filters.map((f) => f.yaml)).toEqual(['a: 2']);
    expect(composeTenantDocument(state.config!.document, state.filters).components!.cmdfilter).toEqual({ filters: ['inline', 'a: 2'] });
    expect(await filtersRepository.deactivate(sql, 'acme', 'pytest')).toBe(1);
    expect((await loadTenantState(sql, 'acme'))!.filters).toEqual([]);
    expect(await loadTenantState(sql, 'nobody')).toBeNull();
  });

  it('the audit chain verifies, and catches an edited row, a deleted row and a deleted tail', async () => {
    for (let i = 0; i < 4; i++) {
      await sql.transaction((tx) =>
        auditRepository.append(tx, {
          actor: 'admin',
          action: 'test',
          tenant: 'acme',
          target: String(i),
          after: { b: i, a: [1, { z: 1, y: 2 }] },
        }),
      );
    }
    expect(await auditRepository.verify(sql)).toEqual({ ok: true, checked: 4 });
    const rows = await auditRepository.list(sql, { action: 'test', limit: 10 });
    const [d, c2, b] = rows.map((r) => r.id);
    // Append-only in the database; a tamperer has to drop the guard first, and the chain still tells.
    await expect(sql.query(`UPDATE audit_log SET reason = 'x' WHERE id = $1`, [b])).rejects.toThrow(/history is immutable/);
    await expect(sql.query('DELETE FROM audit_log WHERE id = $1', [b])).rejects.toThrow(/history is immutable/);
    await sql.exec('ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only');
    await sql.query(`UPDATE audit_log SET after = '{"b": 99}'::jsonb WHERE id = $1`, [b]);
    expect(await auditRepository.verify(sql)).toEqual({ ok: false, checked: 2, first_bad_id: b });
    await sql.query('DELETE FROM audit_log WHERE id = $1', [b]);
    expect(await auditRepository.verify(sql)).toEqual({ ok: false, checked: 2, first_bad_id: c2 });
    await sql.query('DELETE FROM audit_log WHERE id <> $1', [d]);
    expect((await auditRepository.verify(sql)).ok).toBe(false);
  });

  it('replica heartbeats upsert and list the live ones', async () => {
    await replicasRepository.heartbeat(sql, {
      id: 'r1',
      startedAt: new Date(),
      generation: 3,
      tenantVersions: { acme: 2 },
      lastPropagationMs: 12,
    });
    await replicasRepository.heartbeat(sql, { id: 'r1', startedAt: new Date(), generation: 4, tenantVersions: { acme: 3 } });
    const [r] = await replicasRepository.live(sql);
    expect(r).toMatchObject({ id: 'r1', generation: 4, tenantVersions: { acme: 3 }, lastPropagationMs: 12 });
    await sql.query("UPDATE gateway_replicas SET heartbeat_at = now() - interval '1 hour'");
    expect(await replicasRepository.live(sql)).toEqual([]);
  });

  it('the in-process bus delivers a generation to every subscriber until it unsubscribes', async () => {
    const bus = new InProcessGenerationBus();
    const seen: number[] = [];
    const off = bus.subscribe((g) => seen.push(g));
    await bus.notify(7);
    off();
    await bus.notify(8);
    expect(seen).toEqual([7]);
  });
});

describe('RedisGenerationPublisher', () => {
  it('does not fail its caller when Redis is down: the announcement is logged and dropped', async () => {
    const { RedisGenerationPublisher } = await import('@context-guru/storage');
    const warned: string[] = [];
    const log = { info() {}, error() {}, warn: (m: string) => void warned.push(m) };
    const p = await RedisGenerationPublisher.connect({ url: 'redis://127.0.0.1:1', log });
    await expect(p.notify(5)).resolves.toBeUndefined();
    expect(warned).toContain('control generation not announced (replicas will poll)');
    await p.close();
  });
});
