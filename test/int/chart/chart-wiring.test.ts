// The chart's wiring is real: render it, take the migration Job's, the admin Deployment's and the
// gateway Deployment's commands and env (resolved from the rendered ConfigMaps and a test Secret
// pointing at this machine's Postgres and Redis), and run them from the files the image holds.
// A gateway started before the migration stays unready; after it, admin and two gateway replicas
// answer on their rendered probe paths and ports, and each replica serves a request upstream.
// There is no API server or container engine here; docs/kubernetes.md says what this stands in for.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PgSqlClient } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { parseEnv } from '../../../apps/gateway/src/env';
import { tracingEnabled } from '../../../apps/gateway/src/observability/tracing';
import { parseAdminEnv } from '../../../apps/admin/src/admin-env';
import { keysRead, resolveEnv, runCommand, waitFor, type Proc, type SecretData } from '../../support/chart-processes';
import {
  appSecret,
  chartPods,
  issueTenantKey,
  migrationCount,
  openAiChat,
  podFields,
  probes,
  startChartUpstream,
  wiringSet,
} from '../../support/chart-pods';
import type { FakeUpstream } from '../../support/fake-upstream';
import { ROOT, render, type K8sObject } from '../../support/helm';
import { parseDockerfile, stageImageTree } from '../../support/image-tree';
import { deployment, job, onlyContainer, service, type IContainer } from '../../support/k8s-models';

jest.setTimeout(120_000);

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const tag = `${process.pid}_${Date.now().toString(36)}`;
const schema = `cg_chart_${tag}`;
const prefix = `cgchart${tag}:`;
const ADMIN_TOKEN = `test-admin-token-${tag}`;
const OPS_TOKEN = `test-ops-token-of-the-chart-${tag}`;

/** Keys the migration entry reads, from its own source (process.env, directly or passed on as `env`). */
function migrationKeys(): Set<string> {
  const files = ['libs/storage/src/sql/migrate-cli.ts', 'libs/storage/src/sql/migrate.ts'];
  const keys = new Set<string>();
  for (const f of files) for (const m of readFileSync(join(ROOT, f), 'utf8').matchAll(/\benv\.([A-Z_][A-Z0-9_]*)/g)) keys.add(m[1]!);
  return keys;
}

describe('the chart runs the real processes it describes', () => {
  const stage = parseDockerfile();
  let objs: K8sObject[];
  let app: string;
  let upstream: FakeUpstream;
  let admin: PgSqlClient;
  const procs: Proc[] = [];
  const secrets: SecretData = {};
  let pods: ReturnType<typeof chartPods>;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'apps', 'gateway', 'dist', 'main.js')))
      throw new Error('run `npm run build` first: the image runs the built tree');
    objs = render({ set: wiringSet(prefix) });
    admin = new PgSqlClient({ connectionString: DATABASE_URL, max: 1 });
    await admin.exec(`CREATE SCHEMA "${schema}"`);
    secrets['context-guru-secrets'] = appSecret({
      databaseUrl: `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      redisUrl: REDIS_URL,
      adminToken: ADMIN_TOKEN,
      opsToken: OPS_TOKEN,
    });
    upstream = await startChartUpstream();
    app = stageImageTree(stage);
    pods = chartPods({ objs, secrets, stage, upstreamUrl: upstream.url, volumesDir: join(app, '..', 'volumes') });
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await upstream?.close();
    await admin?.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin?.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
    if (app) rmSync(join(app, '..'), { recursive: true, force: true });
    process.stdout.write(`chart → local mapping:\n  ${pods?.mapping.join('\n  ')}\n`);
  });

  it('sets only env the apps read, and everything a gateway replica needs to run on Redis and Postgres', () => {
    const c = onlyContainer(deployment(objs, '-gateway'));
    const { env, chartKeys } = resolveEnv(c, objs, secrets, stage.env, podFields('gateway-x'));
    const { read, parsed } = keysRead(parseEnv, env);
    expect(chartKeys.filter((k) => !read.has(k))).toEqual([]);
    expect(parsed).toMatchObject({
      host: '0.0.0.0',
      port: c.ports![0]!.containerPort,
      hotStore: 'redis',
      durableStore: 'postgres',
      migrateOnBoot: false,
      // A cluster default: keyless callers would share tenant `default` (docs/security.md).
      requireTenantKey: true,
      opsToken: OPS_TOKEN,
    });
    expect(parsed).toMatchObject({
      upstreamHeaderTimeoutMs: 600_000,
      upstreamIdleTimeoutMs: 120_000,
      bodyLimitBytes: 32 * 1024 * 1024,
      turnCacheMb: 64,
    });
    expect(parsed.redisUrl).toBe(REDIS_URL);
    expect(parsed.databaseUrl).toContain(schema);
    expect(parsed.replicaId).toBe('cg-context-guru-gateway-x');
    expect(parsed.model.cheap).toMatchObject({ model: 'claude-haiku-4-5', provider: 'anthropic', key: 'sk-ant-compaction-test' });

    const a = onlyContainer(deployment(objs, '-admin'));
    const ae = resolveEnv(a, objs, secrets, stage.env);
    const ar = keysRead(parseAdminEnv, ae.env);
    expect(ae.chartKeys.filter((k) => !ar.read.has(k))).toEqual([]);
    expect(ar.parsed).toMatchObject({
      host: '0.0.0.0',
      adminPort: a.ports![0]!.containerPort,
      adminToken: ADMIN_TOKEN,
      migrateOnBoot: false,
      durableStore: 'postgres',
    });

    const m = onlyContainer(job(objs, '-migrate'));
    const me = resolveEnv(m, objs, secrets, {});
    expect(me.chartKeys.filter((k) => !migrationKeys().has(k))).toEqual([]);
    expect(me.chartKeys).toContain('DATABASE_URL');
  });

  it('tracing and a price table: every key the chart adds is read (OTEL_SERVICE_NAME by the OpenTelemetry SDK itself)', () => {
    const traced = render({ set: ['tracing.otlpEndpoint=http://127.0.0.1:4318'] });
    const withPrices = render({
      set: [
        'config.priceTable.families[0].family=house',
        'config.priceTable.families[0].match[0]=house-',
        'config.priceTable.families[0].input=1',
        'config.priceTable.families[0].output=2',
      ],
    });
    for (const variant of [traced, withPrices]) {
      const c = onlyContainer(deployment(variant, '-gateway'));
      const { env, chartKeys } = resolveEnv(c, variant, secrets, stage.env, podFields('gateway-x'));
      const gateway = keysRead(parseEnv, env);
      const tracing = keysRead(tracingEnabled, env);
      const sdkStandard = new Set(['OTEL_SERVICE_NAME']);
      expect(chartKeys.filter((k) => !gateway.read.has(k) && !tracing.read.has(k) && !sdkStandard.has(k))).toEqual([]);
      if (variant === traced) expect(tracing.parsed).toBe(true);
      else expect(gateway.parsed.prices.some((f) => f.family === 'house')).toBe(true);
    }
  });

  it('the unread-key check fails on a key the app does not read', () => {
    const { read } = keysRead(parseEnv, { PORT: '4000', GATEWAY_PORT: '4000' });
    expect(['PORT', 'GATEWAY_PORT'].filter((k) => !read.has(k))).toEqual(['GATEWAY_PORT']);
  });

  it('the image holds every command the chart runs, and runs as a non-root user in exec form', () => {
    expect(stage.user).toBe('node');
    expect(stage.cmd?.[0]).toBe('node');
    expect(stage.workdir).toBe('/app');
    for (const c of [
      onlyContainer(deployment(objs, '-gateway')),
      onlyContainer(deployment(objs, '-admin')),
      onlyContainer(job(objs, '-migrate')),
    ]) {
      expect(c.command?.[0]).toBe('node');
      expect(existsSync(join(app, c.command!.at(-1)!))).toBe(true); // the entry, after node and its flags
    }
    expect(existsSync(join(app, stage.cmd!.at(-1)!))).toBe(true); // the entry, after node and its flags
    expect(migrationCount(app)).toBeGreaterThan(0);
    expect(existsSync(join(app, 'node_modules', 'jest'))).toBe(false); // production dependencies only
  });

  it('migration Job first (a gateway and an admin started before it stay unready), then admin and two gateways serve', async () => {
    const [gwD, adD, mJ] = [deployment(objs, '-gateway'), deployment(objs, '-admin'), job(objs, '-migrate')];
    const [gwC, adC, mC] = [gwD, adD, mJ].map(onlyContainer) as [IContainer, IContainer, IContainer];
    const [startup, live, ready] = probes(gwC);
    const [adStartup, , adReady] = probes(adC);
    const gw1 = await pods.podEnv(gwD, 'PORT', 'gateway-0');
    const early = runCommand('gateway-0', gwC.command!, gw1.env, app);
    procs.push(early);
    const ad = await pods.podEnv(adD, 'ADMIN_PORT', 'admin-0');
    const adminProc = runCommand('admin-0', adC.command!, ad.env, app);
    procs.push(adminProc);
    const base1 = `http://127.0.0.1:${gw1.port}`;
    const adminBase = `http://127.0.0.1:${ad.port}`;
    // App pods never migrate: on an empty schema both are alive but not ready, and say why.
    for (const [p, base, live0, ready0] of [
      [early, base1, startup, ready],
      [adminProc, adminBase, adStartup, adReady],
    ] as const) {
      await waitFor(p, `${base}${live0}`, 200);
      const unready = await fetch(`${base}${ready0}`);
      expect(unready.status).toBe(503);
      expect(((await unready.json()) as { schema: { ok: boolean; current: number } }).schema).toMatchObject({ ok: false, current: 0 });
    }
    expect((await admin.query('SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1', [schema]))[0]!.n).toBe(0);

    const mEnv = await pods.podEnv(mJ, undefined, 'migration');
    const migration = runCommand('migration', mC.command!, mEnv.env, app);
    procs.push(migration);
    expect(await migration.exited).toEqual({ code: 0, signal: null });
    expect(migration.output()).toMatch(/"msg":"migrations complete","target":"postgres"/);
    const applied = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".schema_migrations`);
    expect(applied[0]!.n).toBe(migrationCount(app));

    // Both become ready by themselves once the schema has caught up; a second gateway joins.
    await waitFor(early, `${base1}${ready}`, 200);
    await waitFor(adminProc, `${adminBase}${adReady}`, 200);
    const gw2 = await pods.podEnv(gwD, 'PORT', 'gateway-1');
    const second = runCommand('gateway-1', gwC.command!, gw2.env, app);
    procs.push(second);

    for (const path of probes(adC)) await waitFor(adminProc, `${adminBase}${path}`, 200);
    const who = await fetch(`${adminBase}/v1/whoami`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(who.status).toBe(200);
    expect((await fetch(`${adminBase}/v1/whoami`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    // The chart requires a tenant key: one tenant and its key, through the admin API.
    const tenantKey = await issueTenantKey(adminBase, ADMIN_TOKEN, 'chart');

    // Each replica, reached the way its Service routes (service port → targetPort http → container port).
    const svc = service(objs, '-gateway');
    expect(svc.spec?.ports?.[0]?.targetPort).toBe('http');
    for (const [p, port] of [
      [early, gw1.port],
      [second, gw2.port],
    ] as const) {
      const base = `http://127.0.0.1:${port}`;
      for (const path of [startup, live, ready]) await waitFor(p, `${base}${path}`, 200);
      const keyless = await fetch(`${base}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'no key' }] }),
      });
      expect(keyless.status).toBe(401);
      // /metrics answers the ServiceMonitor's token only (the Secret's OPS_TOKEN key).
      expect((await fetch(`${base}/metrics`)).status).toBe(401);
      expect((await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })).status).toBe(200);
      // The key is served once this replica applied the admin's write (the path form names it).
      await waitFor(p, `${base}/t/${tenantKey}/stats`, 200);
      const before = upstream.requests.length;
      const oa = await openAiChat(base, tenantKey, `hello from ${p.name}`);
      expect(oa.status).toBe(200);
      expect(JSON.stringify(await oa.json())).toContain('served through the chart');
      const an = await fetch(`${base}/anthropic/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': 'sk-ant-test',
          'anthropic-version': '2023-06-01',
          'x-context-guru-key': tenantKey,
        },
        body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: `hello from ${p.name}` }] }),
      });
      expect(an.status).toBe(200);
      expect(JSON.stringify(await an.json())).toContain('served through the chart');
      expect(upstream.requests.slice(before).map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/messages']);
    }

    // Both replicas heartbeat under their pod names, and the admin lists them (GET /v1/replicas).
    const listed = async () => {
      const r = await fetch(`${adminBase}/v1/replicas`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      return ((await r.json()) as { replicas: Array<{ id: string }> }).replicas.map((x) => x.id).sort();
    };
    for (let ids = await listed(); ids.length < 2; ids = await listed()) await new Promise((r) => setTimeout(r, 200));
    expect(await listed()).toEqual(['cg-context-guru-gateway-0', 'cg-context-guru-gateway-1']);

    // SIGTERM mid-stream (what the kubelet sends after preStop): the stream in flight finishes
    // whole, then the process exits 0 — the grace period only has to outlast the stream.
    const parts = Array.from({ length: 12 }, (_, i) => `part-${i} `);
    const events = [
      ...parts.map(
        (p) =>
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-4o', choices: [{ index: 0, delta: { content: p }, finish_reason: null }] })}\n\n`,
      ),
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-4o', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
      'data: [DONE]\n\n',
    ];
    upstream.setScript(() => ({ kind: 'sse', events, chunkSize: 64, delayMs: 60 }));
    const streaming = await fetch(`http://127.0.0.1:${gw2.port}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', 'x-context-guru-key': tenantKey },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'stream please' }] }),
    });
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.getReader();
    const first = await reader.read();
    let text = new TextDecoder().decode(first.value);
    expect(text).not.toContain('[DONE]'); // the stream is still in flight when SIGTERM arrives
    const stopping = second.stop();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('data: [DONE]');
    for (const p of parts) expect(text).toContain(p);
    expect(await stopping).toEqual({ code: 0, signal: null });

    // SIGTERM is handled (node is PID 1 in the image, which has no default handler): a clean exit 0.
    for (const p of [adminProc, early]) expect(await p.stop()).toEqual({ code: 0, signal: null });
  });
});
