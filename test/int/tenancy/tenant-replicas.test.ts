// Three gateway processes serve tenants from one control plane (real Postgres + Redis): each key
// gets its own tenant's pipeline on every replica, a refused key gets the dialect's 401, a tenant
// never reads another's /expand or /stats, and a change — config, filter set, revocation — is
// applied by every replica while traffic flows, without a restart.
import { randomBytes } from 'node:crypto';
import type { ControlSeed } from '../../support/control-seed';
import type { FakeUpstream } from '../../support/fake-upstream';
import { deploymentKeys, markerIdOf } from '../../support/forwarded-bytes';
import type { Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { postTurn, readyz, startTenantReplicas, waitGeneration, type TenantReplicas } from '../../support/tenant-replicas';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';

jest.setTimeout(240_000);

const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;
const HEAVY = { pipeline: ['format', 'dedup', 'collapse', 'mask'], components: { mask: { keep_recent: 3 } } };
const LITE = { preset: 'safe' };
const steps = agentSteps(12, 5);

let rig: TenantReplicas | undefined;
let seed: ControlSeed;
let upstream: FakeUpstream;
let replicas: Replica[] = [];
const keys: Record<string, { id: string; key: string }> = {};
let generation = 0;
/** The replicas' CG_ENCRYPTION_KEY: marker ids are keyed by the tenant's data key it wraps. */
const KEK = randomBytes(32).toString('base64');

beforeAll(async () => {
  rig = await startTenantReplicas({
    name: 'tenancy',
    script: jsonScript({ expand: false }),
    replicas: 3,
    env: { PRESET: 'off', LOG_LEVEL: 'info', CG_ENCRYPTION_KEY: KEK },
    seedWith: async (s) => {
      await s.createTenant('heavy', HEAVY);
      await s.createTenant('lite', LITE);
      keys.heavy = await s.issueKey('heavy');
      keys.lite = await s.issueKey('lite');
      keys.revoked = await s.issueKey('lite');
      await s.createTenant('off', { preset: 'off' });
      keys.off = await s.issueKey('off');
      generation = await s.disableTenant('off');
    },
  });
  ({ seed, upstream, replicas } = rig);
  await Promise.all(replicas.map((r) => waitGeneration(r, generation)));
});

afterAll(() => rig?.close());

let sessions = 0;
/** A tenant's key and a session of its own (each check starts a conversation of its own). */
const key = (name: string) => ({ 'x-context-guru-key': keys[name]!.key, 'x-context-guru-session': `s${++sessions}` });
const last = () => upstream.requests[upstream.requests.length - 1]!;
/** The last forwarded request of the full 12-step transcript (the background load sends shorter ones). */
const lastFull = () => [...upstream.requests].reverse().find((r) => (r.body.messages as unknown[]).length === 26)!;

/** The heavy tenant's /stats and the replica's last log lines, for a failure message. */
async function whatReplicaSaw(r: Replica): Promise<string> {
  const stats = await fetch(`${r.url}/stats`, { headers: { 'x-context-guru-key': keys.heavy!.key } }).then((res) => res.text());
  return `stats ${stats.slice(0, 2000)}; stderr ${r.stderr().slice(-3000)}`;
}

describe('tenants on three replicas', () => {
  it('each key is compressed per its own tenant config on every replica, and no key leaves the gateway', async () => {
    for (const r of replicas) {
      for (const dialect of ['openai', 'anthropic'] as const) {
        const body = dialect === 'openai' ? openaiTurn(steps, 12) : anthropicTurn(steps, 12);
        expect((await postTurn(r, dialect, body, key('heavy'))).status).toBe(200);
        const markers = last().raw.match(MARKER)?.length ?? 0;
        // Seen once in CI (0 markers, under load): a failure then says what the replica saw.
        if (markers <= 3) throw new Error(`${markers} markers from ${r.url} (${dialect}): ${await whatReplicaSaw(r)}`);
        expect(last().headers['x-context-guru-key']).toBeUndefined();
        expect((await postTurn(r, dialect, body, key('lite'))).status).toBe(200);
        expect(last().raw).not.toMatch(MARKER);
        // No key: the replica's own PRESET (off) forwards the bytes as they came.
        expect((await postTurn(r, dialect, body, { 'x-context-guru-session': `none-${++sessions}` })).status).toBe(200);
        expect(last().raw).toBe(JSON.stringify(body));
      }
    }
  });

  it('the path form /t/<key>/… names the tenant like the header', async () => {
    const res = await postTurn(
      replicas[1]!,
      'openai',
      openaiTurn(steps, 12),
      { 'x-context-guru-session': 'path-form' },
      `/t/${keys.heavy!.key}`,
    );
    expect(res.status).toBe(200);
    expect(last().path).toBe('/v1/chat/completions');
    expect(last().raw.match(MARKER)?.length ?? 0).toBeGreaterThan(3);
  });

  it("unknown, disabled and conflicting keys get 401 in each dialect's error shape", async () => {
    const r = replicas[2]!;
    for (const headers of [{ 'x-context-guru-key': 'cg_live_nope' }, key('off'), { ...key('heavy'), 'x-api-key': keys.lite!.key }]) {
      const o = await postTurn(r, 'openai', openaiTurn(steps, 1), headers);
      expect(o.status).toBe(401);
      expect(((await o.json()) as { error: { code: string } }).error.code).toBe('tenant_auth');
      const a = await postTurn(r, 'anthropic', anthropicTurn(steps, 1), headers);
      expect(a.status).toBe(401);
      expect(await a.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    }
    const path = await postTurn(r, 'anthropic', anthropicTurn(steps, 1), {}, '/t/cg_live_nope');
    expect(path.status).toBe(401);
  });

  it('a tenant reads only its own /expand originals and /stats', async () => {
    const r = replicas[0]!;
    const session = { 'x-context-guru-session': 'shared-name' };
    expect((await postTurn(r, 'anthropic', anthropicTurn(steps, 12), { ...key('heavy'), ...session })).status).toBe(200);
    const id = [...last().raw.matchAll(MARKER)][0]![1]!;
    const own = await fetch(`${replicas[1]!.url}/expand?id=${id}`, { headers: { ...key('heavy'), ...session } });
    expect(own.status).toBe(200);
    const ring = deploymentKeys(seed.dbUrl, KEK);
    try {
      expect(await markerIdOf(ring.keys, await own.text(), 'heavy')).toBe(id);
    } finally {
      await ring.close();
    }
    // Same session name, same id, another tenant's key (or none): not found.
    for (const headers of [key('lite'), {}]) {
      const other = await fetch(`${replicas[2]!.url}/expand?id=${id}`, { headers: { ...headers, ...session } });
      expect(other.status).toBe(404);
    }
    const mine = await fetch(`${r.url}/stats?tenant=heavy`, { headers: key('heavy') });
    expect(mine.status).toBe(200);
    const stats = (await mine.json()) as { tenant: string; requests: number; saved_tokens: number };
    expect(stats.tenant).toBe('heavy');
    expect(stats.requests).toBeGreaterThan(0);
    expect(stats.saved_tokens).toBeGreaterThan(0);
    expect((await fetch(`${r.url}/stats?tenant=heavy`, { headers: key('lite') })).status).toBe(403);
    expect((await fetch(`${r.url}/stats?tenant=heavy`)).status).toBe(403);
    const lite = (await (await fetch(`${r.url}/stats`, { headers: key('lite') })).json()) as { tenant: string; requests: number };
    expect(lite.tenant).toBe('lite');
    // Replica 0 served heavy three times (two dialects, then the /expand setup) and lite twice.
    expect(stats.requests).toBe(3);
    expect(lite.requests).toBe(2);
    expect((await fetch(`${r.url}/stats`, { headers: key('off') })).status).toBe(401);
  });

  it('metrics carry the tenant label', async () => {
    const text = await (await fetch(`${replicas[0]!.url}/metrics`)).text();
    expect(text).toMatch(/cg_requests_total\{route="anthropic",outcome="ok",tenant="heavy"\} \d+/);
    expect(text).toMatch(/cg_control_generation \d+/);
  });

  it('config, filter set and revocation reach every replica under load, without a restart', async () => {
    let stop = false;
    let served = 0;
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        // At most 11 steps: the checks below send 12 and find their own request by its length.
        const res = await postTurn(replicas[i % 3]!, 'openai', openaiTurn(steps, 1 + (i % 11)), key(i % 2 ? 'heavy' : 'lite'));
        await res.text();
        served++;
      }
    })();
    try {
      // lite switches to the heavy pipeline.
      const { generation: g1 } = await seed.pushConfig('lite', HEAVY);
      await Promise.all(replicas.map((r) => waitGeneration(r, g1)));
      for (const r of replicas) {
        expect((await postTurn(r, 'openai', openaiTurn(steps, 12), key('lite'))).status).toBe(200);
        expect(lastFull().raw.match(MARKER)?.length ?? 0).toBeGreaterThan(3);
        const { body } = await readyz(r);
        expect(body.config.find((t) => t.tenant === 'lite')?.version).toBe(2);
      }
      // Rollback restores the previous behaviour.
      const g2 = await seed.activateConfig('lite', 1);
      await Promise.all(replicas.map((r) => waitGeneration(r, g2)));
      for (const r of replicas) {
        expect((await postTurn(r, 'openai', openaiTurn(steps, 12), key('lite'))).status).toBe(200);
        expect(lastFull().raw).not.toMatch(MARKER);
      }
      // A revoked key is refused by every replica; the tenant's other key still works.
      const g3 = await seed.revokeKey('lite', keys.revoked!.id);
      await Promise.all(replicas.map((r) => waitGeneration(r, g3)));
      for (const r of replicas) {
        expect((await postTurn(r, 'openai', openaiTurn(steps, 1), key('revoked'))).status).toBe(401);
        expect((await postTurn(r, 'openai', openaiTurn(steps, 1), key('lite'))).status).toBe(200);
      }
    } finally {
      stop = true;
      await load;
    }
    expect(served).toBeGreaterThan(0);
  });

  it("no tenant key ever appears in a replica's log", () => {
    for (const r of replicas) {
      expect(r.stderr()).toMatch(/control generation applied/);
      expect(r.stderr()).not.toContain('cg_live_');
    }
  });

  it("a pushed filter set applies to the tenant's cmdfilter on every replica", async () => {
    const filter = [
      'schema_version: 1',
      'filters:',
      '  deploy-log:',
      "    match: '^\\$ deploy-tool'",
      "    strip_lines_matching: ['^DEBUG ']",
      'tests:',
      '  deploy-log:',
      '    - name: strips-debug',
      '      input: "$ deploy-tool --all\\nDEBUG x\\nok\\n"',
      '      expected: "ok"',
      '',
    ].join('\n');
    const { generation: g0 } = await seed.pushConfig('lite', { pipeline: ['cmdfilter'], components: { cmdfilter: { min_size: 0 } } });
    await Promise.all(replicas.map((r) => waitGeneration(r, g0)));
    const output = `${Array.from({ length: 60 }, (_, i) => `DEBUG connecting shard ${i} of the deployment cluster`).join('\n')}\ndeployed 60 shards\n`;
    const body = {
      model: 'gpt-fake',
      messages: [
        { role: 'user', content: 'deploy it' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'deploy-tool --all' }) } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: output },
      ],
    };
    expect((await postTurn(replicas[0]!, 'openai', body, key('lite'))).status).toBe(200);
    expect(last().raw).toContain('DEBUG connecting shard 7');
    const g1 = await seed.pushFilter('lite', 'deploy', filter);
    await Promise.all(replicas.map((r) => waitGeneration(r, g1)));
    for (const r of replicas) {
      expect((await postTurn(r, 'openai', body, { ...key('lite'), 'x-context-guru-session': `f-${r.url}` })).status).toBe(200);
      expect(last().raw).not.toContain('DEBUG connecting shard 7');
      expect(last().raw).toContain('deployed 60 shards');
    }
  });
});
