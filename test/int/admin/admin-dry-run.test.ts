// Dry-run: a sample request in either dialect through the active config, a stored version or a
// candidate, with the tenant's filter sets — and proof, by reading Redis and every session table,
// that nothing was stashed and no session state was written.
import { Redis } from 'ioredis';
import { ACME_FILTER_YAML, acmeBuildRequest } from '../../support/admin-fixtures';
import { startAdmin, type AdminHarness } from '../../support/admin-harness';
import { REDIS_URL, scanKeys } from '../storage/redis-support';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';
import { responsesTurn } from '../../support/responses-fixtures';
import { geminiTurn } from '../../support/gemini-fixtures';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';

jest.setTimeout(60_000);

const SESSION_TABLES = ['stash_archive', 'ownership', 'session_checkpoint', 'session_state', 'kept', 'session_turn'];

describe('admin dry-run', () => {
  let h: AdminHarness;
  let redis: Redis;
  const trace = async () => {
    const out: Record<string, number> = { redis_keys: (await scanKeys(redis, h.prefix)).length };
    for (const t of SESSION_TABLES) out[t] = Number((await h.sql.query(`SELECT count(*)::int AS n FROM ${t}`))[0]!.n);
    return out;
  };

  beforeAll(async () => {
    h = await startAdmin();
    redis = new Redis(REDIS_URL);
    await h.call('POST', '/v1/tenants', { body: { id: 'acme', name: 'Acme' } });
    await h.call('POST', '/v1/tenants/acme/configs', { body: { document: { preset: 'agent' }, activate: true } });
    await h.call('POST', '/v1/tenants/acme/configs', { body: { document: { preset: 'off' } } });
  });
  afterAll(async () => {
    redis.disconnect();
    await h.close();
  });

  it.each(['openai', 'anthropic'] as const)('runs a %s request through the active config and leaves no trace', async (provider) => {
    const empty = await trace();
    const sample = provider === 'openai' ? openaiTurn(agentSteps(12, 4), 12) : anthropicTurn(agentSteps(12, 4), 12);
    const r = await h.call('POST', '/v1/tenants/acme/dry-run', { body: { provider, body: sample } });
    expect(r.status).toBe(200);
    expect(r.json.config).toMatchObject({ source: 'active', version: 1 });
    expect(r.json.tokens.after).toBeLessThan(r.json.tokens.before);
    expect(r.json.forwarded.messages.length).toBe(sample.messages.length);
    expect(r.json.components.map((c: { component: string }) => c.component)).toEqual(r.json.config.pipeline);
    for (const c of r.json.components) expect(typeof c.gates).toBe('object');
    expect(r.json.markers.length).toBeGreaterThan(0);
    for (const m of r.json.markers) expect(JSON.stringify(r.json.forwarded)).toContain(m.marker);
    expect(r.json.would_write.stashes).toBeGreaterThan(0);
    expect(r.json.fail_open).toBeNull();
    // Nothing reached a store: no Redis key, no row in any session table, and the marker does not resolve.
    expect(await trace()).toEqual(empty);
    const expand = await h.call('POST', '/v1/ops/expand', { body: { tenant: 'acme', id: r.json.markers[0].id, reason: 'dry-run check' } });
    expect(expand.status).toBe(404);
  });

  it('runs a Responses API request (provider: responses): tool outputs offloaded, every item kept, no trace', async () => {
    const empty = await trace();
    const sample = responsesTurn(agentSteps(12, 4), 12);
    const r = await h.call('POST', '/v1/tenants/acme/dry-run', { body: { provider: 'responses', body: sample } });
    expect(r.status).toBe(200);
    expect(r.json.tokens.after).toBeLessThan(r.json.tokens.before);
    expect(r.json.forwarded.input.length).toBe((sample.input as unknown[]).length);
    expect(validateProviderShape('responses', r.json.forwarded)).toEqual([]);
    expect(r.json.markers.length).toBeGreaterThan(0);
    for (const item of sample.input as Array<{ type: string }>)
      if (item.type === 'reasoning' || item.type === 'compaction') expect(r.json.forwarded.input).toContainEqual(item);
    expect(await trace()).toEqual(empty);
  });

  it('runs a Gemini request (provider: gemini): function responses offloaded, model contents byte-kept, no trace', async () => {
    const empty = await trace();
    const sample = geminiTurn(agentSteps(12, 4), 12);
    const r = await h.call('POST', '/v1/tenants/acme/dry-run', { body: { provider: 'gemini', body: sample } });
    expect(r.status).toBe(200);
    expect(r.json.tokens.after).toBeLessThan(r.json.tokens.before);
    expect(validateProviderShape('gemini', r.json.forwarded)).toEqual([]);
    expect(r.json.markers.length).toBeGreaterThan(0);
    const contents = sample.contents as Array<{ role: string }>;
    expect(r.json.forwarded.contents.length).toBe(contents.length);
    for (const c of contents) if (c.role === 'model') expect(r.json.forwarded.contents).toContainEqual(c);
    expect(await trace()).toEqual(empty);
  });

  it('runs a stored version or a candidate document; a bad candidate is a 422; a bad body a 400', async () => {
    const sample = openaiTurn(agentSteps(6, 2), 6);
    const off = await h.call('POST', '/v1/tenants/acme/dry-run', { body: { provider: 'openai', body: sample, version: 2 } });
    expect(off.json.config).toMatchObject({ source: 'version', version: 2, pipeline: [] });
    expect(off.json.forwarded).toEqual(sample);
    expect(off.json.markers).toEqual([]);
    const cand = await h.call('POST', '/v1/tenants/acme/dry-run', {
      body: { provider: 'openai', body: JSON.stringify(sample), document: 'pipeline: [format]\n' },
    });
    expect(cand.json.config).toMatchObject({ source: 'candidate', version: null, pipeline: ['format'] });
    const bad = await h.call('POST', '/v1/tenants/acme/dry-run', {
      body: { provider: 'openai', body: sample, document: { pipeline: ['nosuch'] } },
    });
    expect(bad.json.error).toMatchObject({ code: 'invalid_document', message: expect.stringMatching(/document\.pipeline\[0\]/) });
    const notJson = await h.call('POST', '/v1/tenants/acme/dry-run', { body: { provider: 'openai', body: '{"messages": [' } });
    expect(notJson.json.error.code).toBe('invalid_request');
    expect((await h.call('POST', '/v1/tenants/acme/dry-run', { body: { provider: 'openai', body: sample, version: 9 } })).status).toBe(404);
    expect((await h.call('POST', '/v1/tenants/nobody/dry-run', { body: { provider: 'openai', body: sample } })).status).toBe(404);
  });

  it("composes the tenant's active filter sets, like the gateway", async () => {
    await h.call('PUT', '/v1/tenants/acme/filters/acme', { body: { yaml: ACME_FILTER_YAML, activate: true } });
    const sample = acmeBuildRequest(400);
    const r = await h.call('POST', '/v1/tenants/acme/dry-run', {
      body: { provider: 'openai', body: sample, document: { pipeline: ['cmdfilter'] } },
    });
    expect(r.json.config.filter_sets).toEqual(['acme@1']);
    const tool = r.json.forwarded.messages[2].content as string;
    expect(tool).toContain('compiled 3 units');
    expect(tool).not.toContain('progress 200%');
  });
});
