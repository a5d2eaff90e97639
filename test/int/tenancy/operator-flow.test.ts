// The operator's path end to end, through the admin API on main: two tenants with different
// presets, traffic per key compressed per its own config on every one of three gateway replicas
// (the replicas report what they applied in GET /v1/replicas), a pushed filter set applying on
// every replica without a restart, rollback restoring the previous behaviour, and an ops expand
// of a tenant's marker recorded in the verified audit log.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createAdminServer } from '@context-guru/admin';
import { DurableStore, RedisGenerationPublisher, RedisHotStore, TieredHotStore } from '@context-guru/storage';
import { createControlSeed, type ControlSeed } from '../../support/control-seed';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { startPrivateRedis, startReplica, type Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { postTurn } from '../../support/tenant-replicas';
import { agentSteps, openaiTurn } from '../../support/transcripts';

jest.setTimeout(240_000);

const TOKEN = 'operator-flow-bootstrap-token-0123';
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;
const FILTER = readFileSync(path.join(__dirname, '../../fixtures/admin/acme-build.yaml'), 'utf8');
const steps = agentSteps(10, 13);

let seed: ControlSeed;
let redis: { url: string; stop(): Promise<void> };
let upstream: FakeUpstream;
let admin: NestFastifyApplication;
let adminUrl = '';
let publisher: RedisGenerationPublisher;
let store: TieredHotStore;
let replicas: Replica[] = [];
const keys: Record<string, string> = {};

async function api(method: string, route: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(adminUrl + route, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** Until every replica reports the control plane's current generation in GET /v1/replicas. */
async function allApplied(): Promise<Array<{ generation: number; tenant_versions: Record<string, number> }>> {
  for (let i = 0; ; i++) {
    const { json } = await api('GET', '/v1/replicas');
    const live = json.replicas as Array<{ generation: number; tenant_versions: Record<string, number> }>;
    if (live.length === replicas.length && live.every((r) => r.generation >= json.generation)) return live;
    if (i > 600) throw new Error(`replicas did not report generation ${json.generation}: ${JSON.stringify(live)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  redis = await startPrivateRedis();
  seed = await createControlSeed('operator');
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  publisher = await RedisGenerationPublisher.connect({ url: redis.url });
  store = new TieredHotStore(await RedisHotStore.connect({ url: redis.url }), new DurableStore(seed.sql));
  admin = await createAdminServer({ sql: seed.sql, store, notifier: publisher, adminToken: TOKEN });
  await admin.listen(0, '127.0.0.1');
  adminUrl = `http://127.0.0.1:${(admin.getHttpServer().address() as AddressInfo).port}`;
  const env = {
    REDIS_URL: redis.url,
    DATABASE_URL: seed.dbUrl,
    OPENAI_UPSTREAM: upstream.url,
    ANTHROPIC_UPSTREAM: upstream.url,
    PRESET: 'off',
  };
  replicas = await Promise.all([startReplica(env), startReplica(env), startReplica(env)]);
});

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await admin?.close();
  await store?.close();
  await publisher?.close();
  await upstream?.close();
  await seed?.close();
  await redis?.stop();
});

let sessions = 0;
const as = (tenant: string) => ({ 'x-context-guru-key': keys[tenant]!, 'x-context-guru-session': `op${++sessions}` });
const last = () => upstream.requests[upstream.requests.length - 1]!;
const acmeBuild = {
  model: 'gpt-fake',
  messages: [
    { role: 'user', content: 'build it' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'acme-build all' }) } },
      ],
    },
    {
      role: 'tool',
      tool_call_id: 'call_1',
      content: `${Array.from({ length: 80 }, (_, i) => `progress ${i}% compiling the acme units of the build`).join('\n')}\ncompiled 3 units\ndone\n`,
    },
  ],
};

describe('an operator runs two tenants through the admin API', () => {
  it('creates two tenants with different presets; each key is served its own config on every replica', async () => {
    for (const [id, document] of [
      ['alpha', { preset: 'agent', components: { mask: { keep_recent: 2 } } }],
      ['beta', { preset: 'safe' }],
    ] as const) {
      expect((await api('POST', '/v1/tenants', { id, name: id })).status).toBe(201);
      const key = await api('POST', `/v1/tenants/${id}/keys`, { label: 'ci' });
      expect(key.status).toBe(201);
      keys[id] = key.json.key;
      expect((await api('POST', `/v1/tenants/${id}/configs`, { document, activate: true })).status).toBe(201);
    }
    const live = await allApplied();
    for (const r of live) expect(r.tenant_versions).toMatchObject({ alpha: 1, beta: 1 });
    for (const r of replicas) {
      expect((await postTurn(r, 'openai', openaiTurn(steps, 10), as('alpha'))).status).toBe(200);
      expect([...last().raw.matchAll(MARKER)].length).toBeGreaterThan(3);
      expect((await postTurn(r, 'openai', openaiTurn(steps, 10), as('beta'))).status).toBe(200);
      expect(last().raw).not.toMatch(MARKER);
    }
  });

  it('a pushed filter set applies on every replica without a restart, and rollback restores the previous behaviour', async () => {
    expect(
      (await api('POST', '/v1/tenants/beta/configs', { document: { pipeline: ['format', 'cmdfilter'] }, activate: true })).status,
    ).toBe(201);
    const put = await api('PUT', '/v1/tenants/beta/filters/acme-build', { yaml: FILTER, activate: true });
    expect(put.status).toBe(200);
    await allApplied();
    for (const r of replicas) {
      expect((await postTurn(r, 'openai', acmeBuild, as('beta'))).status).toBe(200);
      expect(last().raw).not.toContain('progress 41%');
      expect(last().raw).toContain('compiled 3 units');
    }
    expect((await api('POST', '/v1/tenants/beta/configs/1/activate')).status).toBe(200);
    const live = await allApplied();
    for (const r of live) expect(r.tenant_versions).toMatchObject({ alpha: 1, beta: 1 });
    for (const r of replicas) {
      expect((await postTurn(r, 'openai', acmeBuild, as('beta'))).status).toBe(200);
      expect(last().raw).toContain('progress 41%');
    }
  });

  it("an ops expand returns the tenant's original and shows up in the verified audit log", async () => {
    expect((await postTurn(replicas[0]!, 'openai', openaiTurn(steps, 10), as('alpha'))).status).toBe(200);
    const id = [...last().raw.matchAll(MARKER)][0]![1]!;
    const other = await api('POST', '/v1/ops/expand', { tenant: 'beta', id, reason: 'support ticket 42' });
    expect(other.status).toBe(404);
    const own = await api('POST', '/v1/ops/expand', { tenant: 'alpha', id, reason: 'support ticket 42' });
    expect(own.status).toBe(200);
    expect(own.json.original.length).toBeGreaterThan(100);
    const audit = await api('GET', '/v1/audit?tenant=alpha&action=ops.expand');
    expect(audit.json[0] ?? audit.json.entries?.[0]).toMatchObject({
      action: 'ops.expand',
      tenant: 'alpha',
      target: id,
      reason: 'support ticket 42',
    });
    expect((await api('GET', '/v1/audit/verify')).json).toMatchObject({ ok: true });
  });
});
