// A real Prometheus (Debian's) scrapes a gateway that served a multi-turn session; every query of
// every dashboard panel must parse and evaluate through the HTTP API, and each Savings and Gateway
// health panel must return data. `promtool check metrics` must pass on what /metrics serves. The session's
// tenant is the control plane's `default`, serving SESSION_CONFIG with the agent preset's stored
// version in shadow (every request sampled), so the shadow panels have data too.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DASHBOARDS } from '../../../apps/gateway/src/observability/dashboards';
import { parsePipelineYaml } from '@context-guru/components';
import { createControlSeed, type ControlSeed } from '../../support/control-seed';
import { startGateway, type GatewayHarness } from '../../support/gateway-harness';
import { SESSION_CONFIG, runObservedSession, startObservedUpstream, type ObservedUpstream } from '../../support/observed-session';

jest.setTimeout(90_000);

let up: ObservedUpstream;
let gateway: GatewayHarness;
let seed: ControlSeed;
let prom: ChildProcess;
let promUrl = '';
const dir = mkdtempSync(join(tmpdir(), 'cg-prom-'));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

interface QueryResult {
  status: string;
  error?: string;
  data?: { result: unknown[] };
}

async function query(expr: string): Promise<QueryResult> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  return (await res.json()) as QueryResult;
}

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await ok().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Grafana's variables as a dashboard would fill them in. */
const concrete = (expr: string, job = '.*') =>
  expr
    .replaceAll('$tenant', '.*')
    .replaceAll('$namespace', '.*')
    .replaceAll('$job', job)
    .replaceAll('$__rate_interval', '30s')
    .replaceAll('$__range', '5m');

beforeAll(async () => {
  up = await startObservedUpstream();
  seed = await createControlSeed('prom');
  await seed.createTenant('default', { preset: 'agent' });
  await seed.pushConfig('default', {
    ...parsePipelineYaml(SESSION_CONFIG),
    shadow: { version: 1, sample: 1 },
    // 0.65 holds out the OpenAI session of the three (the Anthropic one is at 0.71, the Responses
    // one treated too): the measured-savings panels have both arms to chart.
    holdout: { fraction: 0.65 },
  });
  // Shadow sheds sampled requests while the event loop lags; on a loaded CI machine that dropped
  // every one and left the shadow panels empty. This test is about the panels, not the shedding
  // (test/unit/shadow covers that), so its gateway is never too busy.
  const neverBusy = { busy: () => false, excuse: () => undefined, close: () => undefined };
  gateway = await startGateway(
    up.upstream.url,
    { CONFIG: SESSION_CONFIG, DATABASE_URL: seed.dbUrl, DURABLE_STORE: 'postgres' },
    { shadowPressure: neverBusy },
  );
  await runObservedSession(gateway.url, up);
  await gateway.gw.shadow.runner.idle();
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  const target = new URL(gateway.url).host;
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global: { scrape_interval: 1s, evaluation_interval: 1s }\nscrape_configs: [ { job_name: gateway, static_configs: [ { targets: ['${target}'] } ] } ]\n`,
  );
  prom = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: 'ignore' },
  );
  await until('the first scrape', async () => ((await query('up{job="gateway"} == 1')).data?.result.length ?? 0) > 0);
  // rate() needs two samples inside its window: wait for a few more scrapes.
  await until('three scrapes', async () => {
    const r = (await query('count_over_time(up{job="gateway"}[1m]) >= 3')).data?.result ?? [];
    return r.length > 0;
  });
});
afterAll(async () => {
  prom?.kill('SIGTERM');
  await gateway?.close();
  await up?.close();
  await seed?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('promtool check metrics passes on what /metrics serves: no lint finding, exit 0', async () => {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  // The by-type process gauges are still there (their sum is the total prom-client also exported).
  expect(text).toMatch(/^cg_process_nodejs_active_handles\{type="[^"]+"\} \d+$/m);
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  expect({ status: r.status, output: `${r.stdout}${r.stderr}`.trim() }).toEqual({ status: 0, output: '' });
});

it('the per-dialect series carry each of the three dialects, the Responses API as dialect="responses"', async () => {
  const dialects = async (metric: string) =>
    ((await query(`sum by (dialect) (${metric})`)).data?.result as Array<{ metric: { dialect?: string } }>)
      .map((x) => x.metric.dialect)
      .sort();
  for (const metric of ['cg_upstream_responses_total', 'cg_usage_tokens_total'])
    expect({ metric, dialects: await dialects(metric) }).toEqual({ metric, dialects: ['anthropic', 'openai', 'responses'] });
  // The OpenAI session is held out (nothing saved); the Responses session is treated and saves.
  expect(await dialects('cg_saved_tokens_total')).toEqual(['anthropic', 'responses']);
});

it('a panel scoped to another release (its job) shows none of this gateway’s series', async () => {
  const exprs = Object.values(DASHBOARDS)
    .flatMap((d) => (d.panels ?? []).flatMap((p) => (p as { targets?: Array<{ expr: string }> }).targets ?? []))
    .map((t) => t.expr)
    .filter((e) => !e.includes('vector(')); // `or vector(0)` answers whatever the selector
  expect(exprs.length).toBeGreaterThan(20);
  const withData = async (job: string) => {
    let n = 0;
    for (const e of exprs) if (((await query(concrete(e, job))).data?.result.length ?? 0) > 0) n++;
    return n;
  };
  expect(await withData('gateway')).toBeGreaterThan(10);
  expect(await withData('another-release')).toBe(0);
});

describe.each(Object.entries(DASHBOARDS))('dashboard %s', (name, d) => {
  const mustHaveData = name === 'savings' || name === 'health';
  it.each((d.panels ?? []).map((p) => [p.title ?? '', p] as const))('%s', async (_title, p) => {
    const targets = ((p as { targets?: Array<{ expr: string }> }).targets ?? []).map((t) => concrete(t.expr));
    let withData = 0;
    for (const expr of targets) {
      const r = await query(expr);
      expect({ expr, status: r.status, error: r.error }).toEqual({ expr, status: 'success', error: undefined });
      if ((r.data?.result.length ?? 0) > 0) withData++;
    }
    if (mustHaveData) expect(withData).toBeGreaterThan(0);
  });
});
