// CPU profiles of the paths the targets are about, summarised by self time per function:
//   npm run bench:profile -- off | agent | bare [connections]   a process under load, 60 KB body
//   npm run bench:profile -- warm          warm turns of a 1 MB / 200-message session, in-process
//   npm run bench:profile -- overload [n]  the agent gateway under n (1,000) concurrent 200 KB requests
// The raw .cpuprofile is kept (path printed) for a flame-graph viewer.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryHotStore } from '@context-guru/storage';
import { upstreamBytes } from '../apps/gateway/src/proxy/chat/upstream-body';
import { prepareRequest } from '../apps/gateway/src/proxy/prepare-request';
import { createTenantRuntime } from '../apps/gateway/src/tenancy/tenant-runtime';
import { prepareDeps } from '../test/support/prepare-deps';
import { agentSteps, openaiTurn } from '../test/support/transcripts';
import { agentPayload } from './agent-payload';
import { load, startGatewayProc, startScript, writeTemp } from './bench-procs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);

function summarise(file: string): string {
  return execFileSync(process.execPath, [join(__dirname, 'procs', 'profile-summary.cjs'), file, process.env.PROFILE_TOP ?? '30'], {
    encoding: 'utf8',
  });
}

async function waitFor(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 100));
}

async function profileGateway(preset: string, connections: number): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'cg-prof-')), `${preset}-${connections}.cpuprofile`);
  const stub = await startScript('upstream-stub.cjs');
  const hook = ['-r', join(__dirname, 'procs', 'cpu-prof-hook.cjs')];
  const gw =
    preset === 'bare'
      ? await startScript('bare-proxy.cjs', [stub.url], hook, { CG_PROFILE_FILE: file })
      : await startGatewayProc({ PRESET: preset, OPENAI_UPSTREAM: stub.url, ANTHROPIC_UPSTREAM: stub.url, CG_PROFILE_FILE: file }, hook);
  const bodyFile = writeTemp('profile-body.json', agentPayload(60_000).raw);
  const url = `${gw.url}${preset === 'bare' ? '' : '/openai'}/v1/chat/completions`;
  const headers = { 'x-context-guru-session': 'profile' };
  try {
    await load(url, bodyFile, connections, 2, headers);
    process.kill(gw.pid, 'SIGUSR2');
    const r = await load(url, bodyFile, connections, SECONDS, headers);
    process.kill(gw.pid, 'SIGUSR2');
    await waitFor(() => existsSync(file));
    process.stderr.write(`${preset}: ${r.rps.toFixed(0)} req/s at ${connections} connections\n`);
  } finally {
    await gw.stop();
    await stub.stop();
  }
  return `${file}\n${summarise(file)}`;
}

async function profileWarmTurns(): Promise<string> {
  const steps = agentSteps(140, 11);
  const store = new MemoryHotStore({ ttlSeconds: 10_000, maxEntries: 100_000 });
  const tenant = createTenantRuntime('prof', { preset: 'agent' }, 1);
  const deps = prepareDeps(store);
  // As the chat route decodes a body: only the bytes the previous turn did not share.
  const bodyText = (bytes: Buffer) => deps.turns?.text('openai', bytes, tenant.id) ?? bytes.toString('utf8');
  // One turn as the route runs it: decode, prepare, and the bytes handed to undici.
  const turn = async (bytes: Buffer) => {
    const raw = bodyText(bytes);
    const prepared = await prepareRequest(deps, {
      route: 'openai',
      dialect: 'openai',
      raw,
      tenant,
      pipeline: tenant.built.pipeline,
      cacheMode: 'auto',
      sessionHeader: 'prof',
      bypassHeader: false,
    });
    return upstreamBytes(prepared, raw, bytes);
  };
  const bodies = Array.from({ length: 40 }, (_, i) => Buffer.from(JSON.stringify(openaiTurn(steps, 100 + i))));
  await turn(bodies[0]!);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  const t0 = performance.now();
  for (let i = 1; i < bodies.length; i++) await turn(bodies[i]!);
  const ms = (performance.now() - t0) / (bodies.length - 1);
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  const file = join(mkdtempSync(join(tmpdir(), 'cg-prof-')), 'warm.cpuprofile');
  writeFileSync(file, JSON.stringify(profile));
  return `${file}\nwarm turn mean ${ms.toFixed(2)} ms (${(bodies[0]!.length / 1e6).toFixed(2)} MB body)\n${summarise(file)}`;
}

/** The overload bench's burst (each request a new session), profiled from its start to its end. */
async function profileOverload(count: number): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'cg-prof-')), `overload-${count}.cpuprofile`);
  const stub = await startScript('upstream-stub.cjs', ['500']);
  const hook = ['-r', join(__dirname, 'procs', 'cpu-prof-hook.cjs')];
  // DURABLE_STORE=none profiles the same burst without the embedded durable tier (PGlite);
  // REDIS_URL and DATABASE_URL, on Redis + Postgres (the burst's sessions are new in every run).
  const durable = Object.fromEntries(
    ['DURABLE_STORE', 'REDIS_URL', 'DATABASE_URL'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])),
  );
  const gw = await startGatewayProc(
    { PRESET: 'agent', OPENAI_UPSTREAM: stub.url, ANTHROPIC_UPSTREAM: stub.url, CG_PROFILE_FILE: file, ...durable },
    hook,
  );
  const bodyFile = writeTemp('profile-body200k.json', agentPayload(200_000).raw);
  try {
    process.kill(gw.pid, 'SIGUSR2');
    const out = execFileSync(
      process.execPath,
      [
        join(__dirname, 'procs', 'burst-client.cjs'),
        `${gw.url}/openai/v1/chat/completions`,
        bodyFile,
        String(count),
        '{}',
        `burst-${Date.now()}`,
      ],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 24,
      },
    );
    process.kill(gw.pid, 'SIGUSR2');
    await waitFor(() => existsSync(file));
    const r = JSON.parse(out) as { wallMs: number; failed: number };
    process.stderr.write(`overload: ${count} requests in ${(r.wallMs / 1000).toFixed(1)} s, ${r.failed} failed\n`);
  } finally {
    await gw.stop();
    await stub.stop();
  }
  return `${file}\n${summarise(file)}`;
}

async function main(): Promise<void> {
  const what = process.argv[2] ?? 'off';
  const n = Number(process.argv[3] ?? (what === 'overload' ? 1000 : 32));
  const out = what === 'warm' ? await profileWarmTurns() : what === 'overload' ? await profileOverload(n) : await profileGateway(what, n);
  process.stdout.write(`${out}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
