// `holdout: {fraction}` through the admin API (validated, stored, audited) and GET
// /v1/tenants/{id}/savings over the rows gateway replicas add to holdout_sessions: the estimate per
// config version, its interval and verdict, the version filter and the errors.
import { estimateSavings, holdoutSessionsRepository, type HoldoutSessionCost } from '@context-guru/storage';
import { startAdmin, type AdminHarness } from '../../support/admin-harness';
import { mulberry32 } from '../../support/prng';

jest.setTimeout(60_000);

/** Sessions as replicas would add them: holdout billed `1/(1-effect)` as much per input token. */
function sessions(version: number, n: number, effect: number, seed: number): HoldoutSessionCost[] {
  const rng = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => {
    const arm = i % 4 === 0 ? 'holdout' : 'treated';
    const inputTokens = Math.round(20_000 + rng() * 400_000);
    const rate = (arm === 'holdout' ? 1 : 1 - effect) * (0.8 + rng() * 0.4) * 1e-6;
    return { tenant: 'shop', version, session: `s${version}-${i}`, arm, billedUsd: inputTokens * rate, inputTokens, turns: 3 + (i % 20) };
  });
}

describe('measured savings through the admin API', () => {
  let h: AdminHarness;
  beforeAll(async () => {
    h = await startAdmin();
    expect((await h.call('POST', '/v1/tenants', { body: { id: 'shop', name: 'Shop' } })).status).toBe(201);
  });
  afterAll(() => h.close());

  it('refuses a holdout outside [0, 1] or with an unknown key, naming it, and stores nothing', async () => {
    for (const [holdout, msg] of [
      [{ fraction: 1.5 }, /document\.holdout.*fraction/],
      [{ fraction: -0.1 }, /document\.holdout.*fraction/],
      [{ fraction: 0.1, share: 2 }, /document\.holdout.*share/],
      [{}, /document\.holdout.*fraction/],
    ] as const) {
      const r = await h.call('POST', '/v1/tenants/shop/configs', { body: { document: { preset: 'balanced', holdout }, activate: true } });
      expect([r.status, r.json.error.code]).toEqual([422, 'invalid_document']);
      expect(r.json.error.message).toMatch(msg);
    }
    expect((await h.call('GET', '/v1/tenants/shop/configs')).json).toEqual([]);
  });

  it('stores and audits a holdout like the rest of the document; the savings of a version without sessions say so', async () => {
    const pushed = await h.call('POST', '/v1/tenants/shop/configs', {
      body: { document: 'preset: balanced\nholdout: { fraction: 0.2 }\n', activate: true },
    });
    expect(pushed).toMatchObject({ status: 201, json: { version: 1, active: true } });
    expect((await h.call('GET', '/v1/tenants/shop/configs/active')).json.document.holdout).toEqual({ fraction: 0.2 });
    const audit = (await h.call('GET', '/v1/audit?tenant=shop&action=config.push_activate')).json;
    expect(audit[0].after.document.holdout).toEqual({ fraction: 0.2 });
    const r = await h.call('GET', '/v1/tenants/shop/savings');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ tenant: 'shop', active_version: 1, fraction: 0.2 });
    expect(r.json.versions).toHaveLength(1);
    expect(r.json.versions[0]).toMatchObject({
      version: 1,
      active: true,
      sessions: 0,
      saving_pct: null,
      significant: false,
      verdict: 'insufficient_data',
    });
  });

  it('answers each version the estimate of its sessions: a real saving is significant, none is not', async () => {
    const v1 = sessions(1, 160, 0.3, 7);
    const v2 = sessions(2, 120, 0, 8);
    // Two replicas' deltas of the same sessions add up: split every row in two halves.
    const part = (c: HoldoutSessionCost, first: boolean) => ({
      ...c,
      billedUsd: first ? c.billedUsd / 4 : (c.billedUsd * 3) / 4,
      inputTokens: first ? 1000 : c.inputTokens - 1000,
      turns: first ? 1 : c.turns - 1,
    });
    await holdoutSessionsRepository.add(
      h.sql,
      [...v1, ...v2].map((c) => part(c, true)),
    );
    await holdoutSessionsRepository.add(
      h.sql,
      [...v1, ...v2].map((c) => part(c, false)),
    );
    const all = (await h.call('GET', '/v1/tenants/shop/savings')).json;
    expect(all.versions.map((v: { version: number; active: boolean }) => [v.version, v.active])).toEqual([
      [2, false],
      [1, true],
    ]);
    const [second, first] = all.versions;
    expect(first).toEqual({ version: 1, active: true, ...estimateSavings(await holdoutSessionsRepository.list(h.sql, 'shop', 1)) });
    expect(first).toMatchObject({ sessions: 160, verdict: 'saving', significant: true });
    expect(first.treated.sessions + first.holdout.sessions).toBe(160);
    expect(first.interval_low_pct).toBeLessThan(30);
    expect(first.interval_high_pct).toBeGreaterThan(30);
    expect(first.summary).toMatch(/^saved /);
    expect(second).toMatchObject({ version: 2, sessions: 120, verdict: 'not_significant', significant: false });
    expect(second.summary).toMatch(/not yet significant/);
    const one = (await h.call('GET', '/v1/tenants/shop/savings?version=2')).json;
    expect(one.versions).toEqual([second]);
  });

  it('is a viewer route with the API errors: unknown tenant or version, a bad query', async () => {
    const viewer = (await h.call('POST', '/v1/admin-keys', { body: { role: 'viewer' } })).json.key as string;
    expect((await h.call('GET', '/v1/tenants/shop/savings', { token: viewer })).status).toBe(200);
    expect((await h.call('GET', '/v1/tenants/shop/savings', { token: null })).status).toBe(401);
    expect((await h.call('GET', '/v1/tenants/nobody/savings')).json.error.code).toBe('not_found');
    expect((await h.call('GET', '/v1/tenants/shop/savings?version=9')).json.error).toMatchObject({ code: 'not_found' });
    const bad = await h.call('GET', '/v1/tenants/shop/savings?version=abc');
    expect([bad.status, bad.json.error.code]).toEqual([400, 'invalid_request']);
    expect((await h.call('GET', '/v1/tenants/Bad!/savings')).json.error.code).toBe('invalid_request');
  });
});
