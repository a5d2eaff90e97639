// CPU profiles of the paths the targets are about, summarised by self time per function:
//   npm run bench:profile -- off | agent | bare [connections]   a process under load, 60 KB body
//   npm run bench:profile -- warm          warm turns of a 1 MB / 200-message session, in-process
//   npm run bench:profile -- overload [n]  the agent gateway under n (1,000) concurrent 200 KB requests
//   npm run bench:profile -- gc off | agent | bare [connections] [windows]  GC cost per request, per window
//   npm run bench:profile -- sessions [agents]  the agent gateway under the sessions bench's replay (1 agent)
// The raw .cpuprofile is kept (path printed) for a flame-graph viewer.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryHotStore } from '@context-guru/storage';
import { upstreamBytes, prepareRequest, createTenantRuntime } from '@context-guru/engine';
import { prepareDeps } from '../test/support/prepare-deps';
import { agentSteps, openaiTurn } from '../test/support/transcripts';
import { agentPayload } from './agent-payload';
import { cpuMsOf, load, startGatewayProc, startScript, writeTemp, type Proc } from './bench-procs';
import { gcWindow, lastTwo } from './gc-window';
import { writePlan } from './sessions.bench';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);

function summarise(file: string): string {
  return execFileSync(process.execPath, [join(__dirname, 'procs', 'profile-summary.cjs'), file, process.env.PROFILE_TOP ?? '30'], {
    encoding: 'utf8',
  });
}

async function waitFor(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 100));
}

/** The bare proxy or a gateway on `preset`, in front of `stub`, with a preload hook and its env. */
function startTarget(preset: string, stub: Proc, hook: string, env: Record<string, string>): Promise<Proc> {
  const nodeArgs = ['-r', join(__dirname, 'procs', hook)];
  return preset === 'bare'
    ? startScript('bare-proxy.cjs', [stub.url], nodeArgs, env)
    : startGatewayProc({ PRESET: preset, OPENAI_UPSTREAM: stub.url, ANTHROPIC_UPSTREAM: stub.url, ...env }, nodeArgs);
}

async function profileGateway(preset: string, connections: number): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'cg-prof-')), `${preset}-${connections}.cpuprofile`);
  const stub = await startScript('upstream-stub.cjs');
  const gw = await startTarget(preset, stub, 'cpu-prof-hook.cjs', { CG_PROFILE_FILE: file });
  const bodyFile = writeTemp('profile-body.json', agentPayload(60_000).raw);
  const url = `${gw.url}${preset === 'bare' ? '' : '/openai'}/v1/chat/completions`;
  const headers = { 'x-context-guru-session': 'profile' };
  try {
    await load(url, bodyFile, connections, Number(process.env.PROFILE_WARMUP_SECONDS ?? 2), headers);
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
  // One turn as the route runs it: decode, prepare, and the bytes handed to undici.
  const turn = async (bytes: Buffer) => {
    const text = deps.turns?.text('openai', bytes, tenant.id);
    const raw = text?.whole() ?? bytes.toString('utf8');
    const prepared = await prepareRequest(deps, {
      route: 'openai',
      dialect: 'openai',
      raw,
      text,
      bytes,
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

/**
 * Garbage collection per request of one process under the 60 KB load, window by window (a fresh
 * process's first windows include JIT warm-up): scavenge count and pause, major GCs, and old-space
 * growth (what scavenges promoted) — figures the machine's other load does not move much.
 */
async function profileGc(preset: string, connections: number, windows: number): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'cg-gc-')), 'gc.jsonl');
  const stub = await startScript('upstream-stub.cjs');
  const target = await startTarget(preset, stub, 'gc-window-hook.cjs', { CG_GC_FILE: file });
  const bodyFile = writeTemp('gc-body.json', agentPayload(60_000).raw);
  const url = `${target.url}${preset === 'bare' ? '' : '/openai'}/v1/chat/completions`;
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  const rows = [`${preset}, ${connections} connection(s), ${seconds} s windows`];
  try {
    for (let w = 1; w <= windows; w++) {
      const cpu0 = cpuMsOf(target.pid);
      process.kill(target.pid, 'SIGUSR2');
      const r = await load(url, bodyFile, connections, seconds, { 'x-context-guru-session': 'gc' });
      // GC entries reach the observer a tick after the collection: let the last ones arrive.
      await new Promise((res) => setTimeout(res, 300));
      process.kill(target.pid, 'SIGUSR2');
      const requests = r.rps * seconds;
      const cpuUs = ((cpuMsOf(target.pid) - cpu0) * 1000) / requests;
      await waitFor(() => readFileSync(file, 'utf8').trim().split('\n').length >= 2 * w);
      const g = gcWindow(...lastTwo(readFileSync(file, 'utf8')), requests);
      const promoted = g.promotedKb === null ? 'n/a (a major GC ran)' : `${g.promotedKb.toFixed(1)} KB/req`;
      rows.push(
        `window ${w}: ${r.rps.toFixed(0)} req/s, CPU ${cpuUs.toFixed(0)} µs/req, ${g.scavenges} scavenges ${g.scavengeUs.toFixed(0)} µs/req, ${g.majors} major ${g.majorUs.toFixed(0)} µs/req (${g.otherPasses} marking steps), promoted ${promoted}`,
      );
    }
  } finally {
    await target.stop();
    await stub.stop();
  }
  return rows.join('\n');
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

/** The sessions bench's replay against the agent gateway (REDIS_URL / DATABASE_URL as given), warm. */
async function profileSessions(agents: number): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'cg-prof-')), `sessions-${agents}.cpuprofile`);
  const stub = await startScript('upstream-stub.cjs');
  const durable = Object.fromEntries(['REDIS_URL', 'DATABASE_URL'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
  const gw = await startTarget('agent', stub, 'cpu-prof-hook.cjs', { CG_PROFILE_FILE: file, ...durable });
  const { planFile, turns } = writePlan();
  const passes = (n: number) => String(Math.ceil((turns * n) / agents));
  const client = (n: number, tag: string) =>
    execFileSync(process.execPath, [join(__dirname, 'procs', 'session-client.cjs'), gw.url, planFile, String(agents), passes(n), tag], {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
  try {
    client(Number(process.env.PROFILE_WARMUP_PASSES ?? 3), `warm-${Date.now()}`);
    const cpu0 = cpuMsOf(gw.pid);
    process.kill(gw.pid, 'SIGUSR2');
    const r = JSON.parse(client(Number(process.env.PROFILE_PASSES ?? 2), `prof-${Date.now()}`)) as {
      wallMs: number;
      ms: number[];
      failed: unknown[];
    };
    process.kill(gw.pid, 'SIGUSR2');
    const cpuUs = ((cpuMsOf(gw.pid) - cpu0) * 1000) / r.ms.length;
    await waitFor(() => existsSync(file));
    process.stderr.write(
      `sessions: ${r.ms.length} turns, ${((r.ms.length * 1000) / r.wallMs).toFixed(0)} turns/s, ${cpuUs.toFixed(0)} µs CPU / turn, ${r.failed.length} failed\n`,
    );
  } finally {
    await gw.stop();
    await stub.stop();
  }
  return `${file}\n${summarise(file)}`;
}

async function main(): Promise<void> {
  const what = process.argv[2] ?? 'off';
  const n = Number(process.argv[3] ?? (what === 'overload' ? 1000 : 32));
  const out =
    what === 'warm'
      ? await profileWarmTurns()
      : what === 'overload'
        ? await profileOverload(n)
        : what === 'sessions'
          ? await profileSessions(Number(process.argv[3] ?? 1))
          : what === 'gc'
            ? await profileGc(process.argv[3] ?? 'off', Number(process.argv[4] ?? 1), Number(process.argv[5] ?? 4))
            : await profileGateway(what, n);
  process.stdout.write(`${out}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
