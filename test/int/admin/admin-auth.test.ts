// Bearer auth, roles and the error-code table: every code of ADMIN_ERRORS is produced by a real
// request here and documented in docs/admin-api.md.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ADMIN_ERRORS } from '@context-guru/admin';
import { startAdmin, type AdminHarness } from '../../support/admin-harness';
import { declaredRoutes } from '../../support/admin-routes';

jest.setTimeout(60_000);

describe('admin auth, roles and errors', () => {
  let h: AdminHarness;
  const keys: Record<string, { id: string; key: string }> = {};

  beforeAll(async () => {
    h = await startAdmin({ opsExpandPerMinute: 2, bodyLimitBytes: 64 * 1024 });
    for (const role of ['admin', 'operator', 'viewer'] as const) {
      const r = await h.call('POST', '/v1/admin-keys', { body: { role, label: role } });
      expect(r.status).toBe(201);
      expect(r.json.key).toMatch(/^cg_adm_[A-Za-z0-9]{32}$/);
      keys[role] = r.json;
    }
    expect((await h.call('POST', '/v1/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
  });
  afterAll(() => h.close());

  it('health is open; everything else needs a valid bearer', async () => {
    expect((await h.call('GET', '/healthz', { token: null })).status).toBe(200);
    const none = await h.call('GET', '/v1/tenants', { token: null });
    expect(none).toEqual({ status: 401, json: { error: { code: 'unauthorized', message: expect.stringMatching(/bearer/) } } });
    expect((await h.call('GET', '/v1/tenants', { token: 'wrong' })).json.error.code).toBe('unauthorized');
    expect((await h.call('GET', '/v1/tenants', { token: 'cg_adm_' + 'x'.repeat(32) })).json.error.code).toBe('unauthorized');
    expect((await h.call('GET', '/v1/whoami')).json).toEqual({ id: 'bootstrap', role: 'admin' });
  });

  it("readiness: the database answers and the schema is this build's", async () => {
    expect(await h.call('GET', '/readyz', { token: null })).toEqual({ status: 200, json: { ready: true, database: 'ok' } });
    const behind = await startAdmin({ schema: async () => ({ current: 4, required: 5, ok: false }) });
    try {
      expect(await behind.call('GET', '/readyz', { token: null })).toEqual({
        status: 503,
        json: { ready: false, database: 'ok', schema: { current: 4, required: 5, ok: false } },
      });
    } finally {
      await behind.close();
    }
  });

  it('a viewer reads but cannot write', async () => {
    const v = keys.viewer!.key;
    expect((await h.call('GET', '/v1/tenants', { token: v })).status).toBe(200);
    expect((await h.call('GET', '/v1/audit/verify', { token: v })).status).toBe(200);
    expect((await h.call('GET', '/v1/replicas', { token: v })).status).toBe(200);
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/v1/tenants', { id: 'v-made', name: 'x' }],
      ['PATCH', '/v1/tenants/acme', { name: 'y' }],
      ['DELETE', '/v1/tenants/acme', undefined],
      ['DELETE', '/v1/tenants/acme/sessions/s1', undefined],
      ['POST', '/v1/tenants/acme/configs', { document: { preset: 'safe' } }],
      ['POST', '/v1/tenants/acme/configs/1/activate', undefined],
      ['PUT', '/v1/tenants/acme/filters/x', { yaml: 'schema_version: 1' }],
      ['POST', '/v1/ops/expand', { tenant: 'acme', id: '0123456789abcdef', reason: 'look' }],
    ];
    for (const [m, p, body] of writes) {
      const r = await h.call(m, p, { token: v, body });
      expect([m, p, r.status, r.json.error?.code]).toEqual([m, p, 403, 'forbidden']);
    }
    expect((await h.call('GET', '/v1/tenants/v-made')).status).toBe(404);
  });

  it('an operator activates and expands but cannot create keys or tenants', async () => {
    const op = keys.operator!.key;
    expect((await h.call('POST', '/v1/admin-keys', { token: op, body: { role: 'viewer' } })).status).toBe(403);
    expect((await h.call('POST', '/v1/tenants/acme/keys', { token: op, body: {} })).status).toBe(403);
    expect((await h.call('POST', '/v1/tenants', { token: op, body: { id: 'op-made', name: 'x' } })).status).toBe(403);
    const pushed = await h.call('POST', '/v1/tenants/acme/configs', { body: { document: { preset: 'safe' } } });
    const act = await h.call('POST', `/v1/tenants/acme/configs/${pushed.json.version}/activate`, { token: op });
    expect(act.status).toBe(200);
    expect((await h.call('GET', '/v1/whoami', { token: op })).json).toEqual({ id: `key:${keys.operator!.id}`, role: 'operator' });
  });

  it('every declared route refuses a role below the one it names, and lets that role through', async () => {
    const RANK = { viewer: 0, operator: 1, admin: 2 } as const;
    const fill = (p: string) =>
      p.replace('{id}', 'acme').replace('{keyId}', '00000000-0000-0000-0000-000000000000').replace('{v}', '1').replace('{name}', 'x');
    for (const r of declaredRoutes()) {
      if (r.role === 'public') continue;
      for (const who of ['viewer', 'operator', 'admin'] as const) {
        const res = await h.call(r.method, fill(r.path), {
          token: keys[who]!.key,
          body: ['POST', 'PUT', 'PATCH'].includes(r.method) ? {} : undefined,
        });
        const allowed = RANK[who] >= RANK[r.role];
        expect([r.method, r.path, who, allowed ? res.status !== 403 && res.status !== 401 : res.status]).toEqual([
          r.method,
          r.path,
          who,
          allowed ? true : 403,
        ]);
      }
    }
  });

  it('a revoked admin key is refused at once; keys are stored only as their hash', async () => {
    const r = await h.call('POST', '/v1/admin-keys', { body: { role: 'admin', label: 'temp' } });
    expect((await h.call('GET', '/v1/tenants', { token: r.json.key })).status).toBe(200);
    expect((await h.call('DELETE', `/v1/admin-keys/${r.json.id}`)).json.revoked).toBe(true);
    const after = await h.call('GET', '/v1/tenants', { token: r.json.key });
    expect(after).toEqual({ status: 401, json: { error: { code: 'unauthorized', message: 'invalid admin credential' } } });
    const stored = await h.sql.query('SELECT key_hash, prefix FROM api_keys WHERE id = $1', [r.json.id]);
    expect(stored[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(r.json.key);
    expect(JSON.stringify((await h.call('GET', '/v1/admin-keys')).json)).not.toContain(r.json.key);
  });

  it('produces every code of the table, each in the one error shape', async () => {
    const seen = new Map<string, number>();
    const record = (r: { status: number; json: any }) => {
      expect(Object.keys(r.json)).toEqual(['error']);
      expect(Object.keys(r.json.error).sort()).toEqual(['code', 'message']);
      seen.set(r.json.error.code, r.status);
    };
    record(await h.call('POST', '/v1/tenants', { body: { id: 'Bad Id!', name: 'x' } }));
    record(await h.call('POST', '/v1/tenants', { body: '{"id": ' }));
    record(await h.call('GET', '/v1/tenants', { token: null }));
    record(await h.call('GET', '/v1/admin-keys', { token: keys.viewer!.key }));
    record(await h.call('GET', '/v1/tenants/nobody'));
    record(await h.call('GET', '/v1/no-such-route'));
    record(await h.call('POST', '/v1/tenants', { body: { id: 'acme', name: 'again' } }));
    record(await h.call('POST', '/v1/tenants', { body: { id: 'big', name: 'x'.repeat(70 * 1024) } }));
    record(await h.call('POST', '/v1/tenants/acme/configs', { body: { document: { preset: 'nope' } } }));
    record(await h.call('PUT', '/v1/tenants/acme/filters/bad', { body: { yaml: 'schema_version: 2\n' } }));
    for (let i = 0; i < 3; i++)
      record(
        await h.call('POST', '/v1/ops/expand', {
          token: keys.operator!.key,
          body: { tenant: 'acme', id: '0123456789abcdef', reason: 'ticket 1' },
        }),
      );
    // No stash store configured: ops expand cannot answer. A broken schema: an unexpected failure.
    const bare = await startAdmin({ store: undefined, authFailuresPerMinute: 1 });
    try {
      await bare.call('POST', '/v1/tenants', { body: { id: 'acme', name: 'Acme' } });
      record(await bare.call('POST', '/v1/ops/expand', { body: { tenant: 'acme', id: '0123456789abcdef', reason: 'ticket 2' } }));
      // A standalone admin has no gateway beside it: the page's figures are the embedded process's.
      record(await bare.call('GET', '/v1/stats'));
      await bare.sql.query('DROP TABLE api_keys CASCADE');
      record(await bare.call('GET', '/v1/whoami', { token: 'cg_adm_' + 'y'.repeat(32) }));
      // One failed attempt a minute from this address: the second is throttled.
      record(await bare.call('GET', '/v1/tenants', { token: 'wrong-token-value-0123456789' }));
      record(await bare.call('GET', '/v1/tenants', { token: 'wrong-token-value-0123456789' }));
    } finally {
      await bare.close();
    }
    for (const [code, def] of Object.entries(ADMIN_ERRORS)) {
      expect([code, seen.get(code)]).toEqual([code, def.status]);
    }
  });

  it('docs/admin-api.md lists exactly the codes of the table, with their status', () => {
    const doc = readFileSync(path.join(__dirname, '../../../docs/admin-api.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(rows).toEqual(Object.entries(ADMIN_ERRORS).map(([c, d]) => [c, d.status]));
  });
});
