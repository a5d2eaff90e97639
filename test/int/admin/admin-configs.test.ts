// Tenants, tenant keys, versioned configs and filter sets through the API on the real Postgres:
// bad documents and filters are refused with nothing stored; activation and rollback bump the
// generation in the change's transaction and are announced on Redis after commit; diff says what
// changed; every write leaves a verified audit row.
import { apiKeysRepository, hashKey, loadTenantState, readGeneration, replicasRepository } from '@context-guru/storage';
import { ACME_FILTER_FAILING_YAML, ACME_FILTER_YAML } from '../../support/admin-fixtures';
import { startAdmin, waitPublished, type AdminHarness } from '../../support/admin-harness';

jest.setTimeout(60_000);

const filterYaml = ACME_FILTER_YAML;
const failingYaml = ACME_FILTER_FAILING_YAML;

describe('admin configs, filters, tenants and keys', () => {
  let h: AdminHarness;
  const count = async (table: string) => Number((await h.sql.query(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n);

  beforeAll(async () => {
    h = await startAdmin();
  });
  afterAll(() => h.close());

  it('creating a tenant and issuing a key bump the generation, stamp the tenant and announce after commit', async () => {
    const t = await h.call('POST', '/v1/tenants', { body: { id: 'acme', name: 'Acme' } });
    expect(t).toMatchObject({ status: 201, json: { id: 'acme', name: 'Acme', disabled: false, generation: 1 } });
    const k = await h.call('POST', '/v1/tenants/acme/keys', { body: { label: 'ci' } });
    expect(k.status).toBe(201);
    expect(k.json.key).toMatch(/^cg_live_[A-Za-z0-9]{32}$/);
    expect(k.json.prefix).toBe(k.json.key.slice(0, 12));
    const found = await apiKeysRepository.findByHash(h.sql, hashKey(k.json.key));
    expect(found).toMatchObject({ tenant: 'acme', role: 'tenant', revokedAt: null });
    expect((await h.call('GET', '/v1/tenants/acme')).json.generation).toBe(2);
    expect(await waitPublished(h, 2)).toEqual([1, 2]);
    expect(JSON.stringify((await h.call('GET', '/v1/tenants/acme/keys')).json)).not.toContain(k.json.key);
    const revoked = await h.call('DELETE', `/v1/tenants/acme/keys/${k.json.id}`);
    expect(revoked.json.revoked).toBe(true);
    expect((await apiKeysRepository.findByHash(h.sql, hashKey(k.json.key)))!.revokedAt).not.toBeNull();
    expect((await h.call('DELETE', '/v1/tenants/acme/keys/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect(await readGeneration(h.sql)).toBe(3);
  });

  it('an invalid document is a 422 naming the key, and leaves no row, no audit and no bump', async () => {
    const before = { configs: await count('pipeline_configs'), audit: await count('audit_log'), gen: await readGeneration(h.sql) };
    const cases: Array<[unknown, RegExp]> = [
      [{ preset: 'nope' }, /document\.preset: unknown preset "nope"/],
      [{ pipeline: ['format', 'nosuch'] }, /document\.pipeline\[1\]: unknown component "nosuch"/],
      [{ preset: 'safe', components: { mask: { keep_recnt: 3 } } }, /document\.components\.mask.*keep_recnt/],
      [{ preset: 'safe', typo: 1 }, /typo/],
      ['preset: [unclosed', /invalid YAML/],
      [{ pipeline: ['cmdfilter'], components: { cmdfilter: { filters: [failingYaml] } } }, /inline test "drops-progress" failed/],
      // A tenant's store TTL and bound are not applied per tenant (the gateway's CONFIG sets them): refused, not ignored.
      [{ preset: 'safe', store: { ttl_seconds: 60 } }, /document\.store\.ttl_seconds: not applied per tenant/],
      ['preset: safe\nstore: { max_entries: 5 }\n', /document\.store\.max_entries: not applied per tenant/],
    ];
    for (const [document, msg] of cases) {
      const r = await h.call('POST', '/v1/tenants/acme/configs', { body: { document, activate: true } });
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe('invalid_document');
      expect(r.json.error.message).toMatch(msg);
    }
    expect({ configs: await count('pipeline_configs'), audit: await count('audit_log'), gen: await readGeneration(h.sql) }).toEqual(before);
  });

  it('versions are immutable; activation and rollback are one transaction each; diff shows what changed', async () => {
    const g0 = await readGeneration(h.sql);
    const v1 = await h.call('POST', '/v1/tenants/acme/configs', { body: { document: 'preset: balanced\n' } });
    expect(v1).toMatchObject({ status: 201, json: { version: 1, active: false } });
    expect(await readGeneration(h.sql)).toBe(g0); // stored, not served: nothing to reload
    expect((await h.call('GET', '/v1/tenants/acme/configs/1')).json).toMatchObject({
      version: 1,
      active: false,
      created_by: 'bootstrap',
      document: { preset: 'balanced' },
    });
    expect((await h.call('GET', '/v1/tenants/acme/configs/active')).status).toBe(404);
    const v2doc = {
      pipeline: ['format', 'dedup', 'mask', 'cmdfilter'],
      components: { dedup: { min_tokens: 300 }, cmdfilter: { filters: [filterYaml] } },
    };
    const v2 = await h.call('POST', '/v1/tenants/acme/configs', { body: { document: v2doc, activate: true } });
    expect(v2.json).toMatchObject({ version: 2, active: true, pipeline: ['format', 'dedup', 'mask', 'cmdfilter'] });
    expect(await readGeneration(h.sql)).toBe(g0 + 1);
    expect((await h.call('GET', '/v1/tenants/acme')).json.generation).toBe(g0 + 1);
    expect((await h.call('GET', '/v1/tenants/acme/configs/active')).json).toMatchObject({ version: 2, document: v2doc });

    const diff = await h.call('GET', '/v1/tenants/acme/configs/diff?from=1&to=2');
    expect(diff.status).toBe(200);
    expect(diff.json.preset).toEqual({ from: 'balanced', to: null });
    // balanced = format, dedup, failed_run, cmdfilter, cacheinject
    expect(diff.json.components).toEqual({ added: ['mask'], removed: ['failed_run', 'cacheinject'], order_changed: false });
    expect(diff.json.options).toEqual([{ component: 'dedup', key: 'min_tokens', from: 100, to: 300 }]);
    expect(diff.json.filters).toEqual({ added: ['acme-build'], removed: [] });
    const back = await h.call('GET', '/v1/tenants/acme/configs/diff?from=2&to=1');
    expect(back.json.filters).toEqual({ added: [], removed: ['acme-build'] });
    expect((await h.call('GET', '/v1/tenants/acme/configs/diff?from=1&to=9')).status).toBe(404);
    expect((await h.call('GET', '/v1/tenants/acme/configs/diff?from=x&to=1')).json.error.code).toBe('invalid_request');

    // Rollback: activating the earlier version; one active row, the generation bumped once more.
    const rb = await h.call('POST', '/v1/tenants/acme/configs/1/activate');
    expect(rb.json).toEqual({ version: 1, active: true, previous: 2 });
    expect(await readGeneration(h.sql)).toBe(g0 + 2);
    const list = (await h.call('GET', '/v1/tenants/acme/configs')).json as Array<{ version: number; active: boolean; document: unknown }>;
    expect(list.map((v) => [v.version, v.active])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(list[1]!.document).toEqual(v2doc); // unchanged by activation
    expect((await h.call('POST', '/v1/tenants/acme/configs/7/activate')).status).toBe(404);
    expect((await h.call('GET', '/v1/tenants/acme/configs/0')).json.error.code).toBe('invalid_request');
    const audit = (await h.call('GET', '/v1/audit?tenant=acme&action=config.rollback')).json;
    expect(audit[0]).toMatchObject({ actor: 'bootstrap', target: '1', before: { version: 2 }, after: { version: 1 } });
  });

  it('a filter set that fails to load is a 422 naming the DSL line, with nothing stored', async () => {
    const before = { sets: await count('filter_sets'), audit: await count('audit_log') };
    const bad = await h.call('PUT', '/v1/tenants/acme/filters/acme', { body: { yaml: failingYaml, activate: true } });
    expect(bad.status).toBe(422);
    expect(bad.json.error.code).toBe('invalid_filter');
    expect(bad.json.error.message).toMatch(/^filters\/acme:10: filter "acme-build": .*inline test "drops-progress" failed/);
    const unknown = await h.call('PUT', '/v1/tenants/acme/filters/acme', {
      body: { yaml: 'schema_version: 1\nfilters:\n  x:\n    mach: "a"\n' },
    });
    expect(unknown.json.error.message).toMatch(/filters\/acme:\d+/);
    expect({ sets: await count('filter_sets'), audit: await count('audit_log') }).toEqual(before);
  });

  it('filter sets version, activate, compose into the served document and delete, each bump announced', async () => {
    const g0 = await readGeneration(h.sql);
    const p1 = await h.call('PUT', '/v1/tenants/acme/filters/acme', { body: { yaml: filterYaml } });
    expect(p1).toMatchObject({ status: 200, json: { name: 'acme', version: 1, active: false, filters: ['acme-build'] } });
    expect(await readGeneration(h.sql)).toBe(g0);
    const p2 = await h.call('PUT', '/v1/tenants/acme/filters/acme', {
      body: { yaml: filterYaml.replace('progress noise', 'progress lines'), activate: true },
    });
    expect(p2.json).toMatchObject({ version: 2, active: true });
    expect(await readGeneration(h.sql)).toBe(g0 + 1);
    expect((await h.call('GET', '/v1/tenants/acme/filters')).json).toEqual([{ name: 'acme', latest: 2, active: 2 }]);
    expect((await loadTenantState(h.sql, 'acme'))!.filters.map((f) => f.version)).toEqual([2]);
    expect((await h.call('POST', '/v1/tenants/acme/filters/acme/1/activate', {})).json).toMatchObject({ version: 1, previous: 2 });
    expect((await h.call('GET', '/v1/tenants/acme/filters/acme')).json.active).toBe(1);
    expect((await h.call('DELETE', '/v1/tenants/acme/filters/acme')).json).toEqual({ name: 'acme', active: false, previous: 1 });
    expect((await loadTenantState(h.sql, 'acme'))!.filters).toEqual([]);
    expect(await readGeneration(h.sql)).toBe(g0 + 3);
    expect((await h.call('DELETE', '/v1/tenants/acme/filters/none')).status).toBe(404);
    const published = await waitPublished(h, g0 + 3);
    expect(published[published.length - 1]).toBe(g0 + 3);
  });

  it('a deleted tenant keeps its history; patch re-enables; every write is on the verified chain', async () => {
    expect((await h.call('DELETE', '/v1/tenants/acme')).json).toMatchObject({ disabled: true, erased: true });
    expect((await loadTenantState(h.sql, 'acme'))!.tenant.disabledAt).not.toBeNull();
    expect((await h.call('PATCH', '/v1/tenants/acme', { body: { disabled: false, name: 'Acme Inc' } })).json).toMatchObject({
      disabled: false,
      name: 'Acme Inc',
    });
    expect((await h.call('PATCH', '/v1/tenants/acme', { body: {} })).json.error.code).toBe('invalid_request');
    const actions = ((await h.call('GET', '/v1/audit?tenant=acme&limit=1000')).json as Array<{ action: string }>)
      .map((a) => a.action)
      .reverse();
    expect(actions).toEqual([
      'tenant.create',
      'key.issue',
      'key.revoke',
      'config.push',
      'config.push_activate',
      'config.rollback',
      'filter.push',
      'filter.push_activate',
      'filter.activate',
      'filter.delete',
      'tenant.disable',
      'tenant.erase',
      'tenant.update',
    ]);
    expect((await h.call('GET', '/v1/audit/verify')).json).toEqual({ ok: true, checked: actions.length });
  });

  it('concurrent pushes get distinct consecutive versions (the tenant row lock serialises numbering)', async () => {
    await h.call('POST', '/v1/tenants', { body: { id: 'busy', name: 'Busy' } });
    const pushes = await Promise.all(
      Array.from({ length: 6 }, () => h.call('POST', '/v1/tenants/busy/configs', { body: { document: { preset: 'safe' } } })),
    );
    expect(pushes.map((p) => p.status)).toEqual(Array(6).fill(201));
    expect(pushes.map((p) => p.json.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await h.call('GET', '/v1/audit/verify')).json.ok).toBe(true);
  });

  it('GET /v1/replicas lists the replicas heartbeating into gateway_replicas, with the current generation', async () => {
    await replicasRepository.heartbeat(h.sql, {
      id: 'gw-a',
      startedAt: new Date('2026-01-01T00:00:00Z'),
      generation: 3,
      tenantVersions: { acme: 1 },
      lastPropagationMs: 40,
    });
    const r = await h.call('GET', '/v1/replicas');
    expect(r.json.generation).toBe(await readGeneration(h.sql));
    expect(r.json.replicas).toEqual([
      {
        id: 'gw-a',
        started_at: '2026-01-01T00:00:00.000Z',
        heartbeat_at: expect.any(String),
        generation: 3,
        tenant_versions: { acme: 1 },
        last_propagation_ms: 40,
      },
    ]);
  });
});
