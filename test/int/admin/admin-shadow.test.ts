// Shadow evaluation through the admin API on the real Postgres: a document whose shadow names no
// other stored version of the tenant is a 422 naming document.shadow.version with nothing stored;
// a valid one is stored, audited and activated like any other document.
import { readGeneration } from '@context-guru/storage';
import { startAdmin, type AdminHarness } from '../../support/admin-harness';

jest.setTimeout(60_000);

describe('admin shadow', () => {
  let h: AdminHarness;
  const count = async (table: string) => Number((await h.sql.query(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n);
  const push = (tenant: string, document: unknown, activate = true) =>
    h.call('POST', `/v1/tenants/${tenant}/configs`, { body: { document, activate } });

  beforeAll(async () => {
    h = await startAdmin();
    expect((await h.call('POST', '/v1/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
    expect((await h.call('POST', '/v1/tenants', { body: { id: 'other', name: 'Other' } })).status).toBe(201);
  });
  afterAll(() => h.close());

  it('a shadow version that does not exist, or names the document itself, is a 422 naming document.shadow.version; nothing is stored', async () => {
    const before = { configs: await count('pipeline_configs'), audit: await count('audit_log'), gen: await readGeneration(h.sql) };
    const none = await push('acme', { preset: 'safe', shadow: { version: 1 } });
    expect(none.status).toBe(422);
    expect(none.json.error).toEqual({
      code: 'invalid_document',
      message: expect.stringMatching(/^document\.shadow\.version: 1 is this document's own version/),
    });
    expect((await push('acme', { preset: 'safe', shadow: { version: 3 } })).json.error.message).toMatch(
      /^document\.shadow\.version: config version 3 of tenant "acme" does not exist \(it has none yet\)/,
    );
    expect((await push('acme', { preset: 'safe', shadow: { version: 1, sample: 2 } })).json.error.message).toMatch(
      /document\.shadow\.sample/,
    );
    expect({ configs: await count('pipeline_configs'), audit: await count('audit_log'), gen: await readGeneration(h.sql) }).toEqual(before);

    expect((await push('acme', { preset: 'safe' })).json.version).toBe(1);
    expect((await push('acme', { preset: 'balanced' }, false)).json.version).toBe(2);
    // Another tenant's version 2 is not acme's: numbering is per tenant.
    expect((await push('other', { preset: 'safe', shadow: { version: 2 } })).json.error.message).toMatch(
      /config version 2 of tenant "other" does not exist/,
    );
    const self = await push('acme', { preset: 'safe', shadow: { version: 3 } });
    expect(self.json.error.message).toMatch(/^document\.shadow\.version: 3 is this document's own version/);
    expect((await push('acme', { preset: 'safe', shadow: { version: 9 } })).json.error.message).toMatch(/its versions are 1–2\)$/);
    expect(await count('pipeline_configs')).toBe(before.configs + 2);
  });

  it('a shadow naming another stored version is stored with its sample default, audited and activated', async () => {
    const g0 = await readGeneration(h.sql);
    const r = await push('acme', { preset: 'safe', shadow: { version: 2 } });
    expect(r).toMatchObject({ status: 201, json: { version: 3, active: true } });
    expect(await readGeneration(h.sql)).toBe(g0 + 1);
    expect((await h.call('GET', '/v1/tenants/acme/configs/active')).json.document).toEqual({
      preset: 'safe',
      shadow: { version: 2, sample: 0.05 },
    });
    const audit = (await h.call('GET', '/v1/audit?tenant=acme&action=config.push_activate')).json;
    expect(audit[0]).toMatchObject({ target: '3', after: { version: 3, document: { shadow: { version: 2, sample: 0.05 } } } });
  });
});
