// Shadow evaluation through the admin API on the real Postgres: a document whose shadow names no
// other stored version of the tenant is a 422 naming document.shadow.version with nothing stored;
// a valid one is stored, audited and activated like any other document. GET
// /v1/tenants/{id}/shadow reads what the replicas summed in shadow_tallies.
import { readGeneration, shadowCounts, shadowTalliesRepository } from '@context-guru/storage';
import { AdminClient } from '../../../apps/admin/src/cli/admin-client';
import { runCommand } from '../../../apps/admin/src/cli/cli-commands';
import { ADMIN_TOKEN, startAdmin, type AdminHarness } from '../../support/admin-harness';

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

  it('GET /v1/tenants/{id}/shadow answers the replicas’ sums per version pair, newest first, narrowed by query', async () => {
    const pair = { tenant: 'acme', activeVersion: 3, candidateVersion: 2 };
    // Two replicas' flushes of the same pair, and an older pair.
    await shadowTalliesRepository.add(h.sql, [
      { tenant: 'acme', activeVersion: 1, candidateVersion: 2, ...shadowCounts({ sampled: 1, dropped: { busy: 1 } }) },
    ]);
    await shadowTalliesRepository.add(h.sql, [
      {
        ...pair,
        ...shadowCounts({
          sampled: 3,
          evaluated: 2,
          dropped: { queue_full: 1 },
          tokensBefore: 1000,
          tokensAfterActive: 900,
          tokensAfterCandidate: 400,
          actedActive: { format: 2 },
          actedCandidate: { format: 2, mask: 1 },
        }),
      },
    ]);
    await shadowTalliesRepository.add(h.sql, [
      {
        ...pair,
        ...shadowCounts({
          sampled: 1,
          evaluated: 1,
          tokensBefore: 200,
          tokensAfterActive: 200,
          tokensAfterCandidate: 100,
          actedCandidate: { mask: 1 },
        }),
      },
    ]);
    const r = await h.call('GET', '/v1/tenants/acme/shadow');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ tenant: 'acme', active_version: 3, candidate: { version: 2, sample: 0.05 } });
    expect(r.json.comparisons.map((c: { active_version: number }) => c.active_version)).toEqual([3, 1]);
    const { first_at, updated_at, ...c } = r.json.comparisons[0];
    expect(Date.parse(updated_at)).toBeGreaterThanOrEqual(Date.parse(first_at));
    expect(c).toEqual({
      active_version: 3,
      candidate_version: 2,
      sampled: 4,
      evaluated: 3,
      dropped: { queue_full: 1, busy: 0, too_large: 0, timeout: 0, failed: 0 },
      tokens: { before: 1200, after_active: 1100, after_candidate: 500 },
      saved: { active: 100, candidate: 700, active_share: 0.0833, candidate_share: 0.5833, candidate_minus_active: 600 },
      components: [
        { component: 'format', active: 2, candidate: 2 },
        { component: 'mask', active: 0, candidate: 2 },
      ],
    });
    expect((await h.call('GET', '/v1/tenants/acme/shadow?active=1')).json.comparisons.map((x: { sampled: number }) => x.sampled)).toEqual([
      1,
    ]);
    expect((await h.call('GET', '/v1/tenants/acme/shadow?candidate=7')).json.comparisons).toEqual([]);
    expect((await h.call('GET', '/v1/tenants/acme/shadow?active=x')).json.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/active/),
    });
    expect((await h.call('GET', '/v1/tenants/acme/shadow?bogus=1')).json.error.code).toBe('invalid_request');
    expect((await h.call('GET', '/v1/tenants/nope/shadow')).status).toBe(404);
    expect((await h.call('GET', '/v1/tenants/other/shadow')).json).toEqual({
      tenant: 'other',
      active_version: null,
      candidate: null,
      comparisons: [],
    });
    // The CLI's `shadow` command is the same call.
    expect(await runCommand(new AdminClient(h.url, ADMIN_TOKEN), ['shadow', 'acme'], {})).toEqual(
      (await h.call('GET', '/v1/tenants/acme/shadow')).json,
    );
  });

  it('the shadow route needs at least a viewer credential', async () => {
    expect((await h.call('GET', '/v1/tenants/acme/shadow', { token: null })).status).toBe(401);
  });
});
