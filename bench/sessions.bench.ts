// Turns per second on the traffic agents send: N virtual agents each replaying corpus sessions turn
// by turn (every body the previous one plus new tool output, a new session id per session replayed)
// against the fast upstream stub, the gateway (preset off and agent on the embedded stores, agent on
// Redis + Postgres) against a bare node:http + undici pass-through, each in its own process.
// Interleaved rounds, order rotated every round; every figure is the median over rounds of its
// ratio to the bare proxy's in the same round. Every target replays the same turns in each round.
import { freshDatabase, type FreshDatabase } from '../test/support/fresh-database';
import { startPrivateRedis } from '../test/support/replicas';
import { cpuMsOf, rssOf, startGatewayProc, startScript, writeTemp, type Proc } from './bench-procs';
import { percentile, table } from './bench-util';
import { sessionCorpus } from './session-corpus';
import { median, rotated } from './throughput.bench';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const AGENTS = (process.env.BENCH_AGENTS ?? '1,16').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Passes over the whole corpus per round (all agents together), and before the rounds per target. */
const PASSES = Number(process.env.BENCH_SESSION_PASSES ?? 1);
const WARMUP_PASSES = Number(process.env.BENCH_SESSION_WARMUP_PASSES ?? 3);
// A subset of the targets, e.g. `bare,agent` (the bare proxy is always measured: it is the baseline).
const ONLY = process.env.BENCH_TARGETS?.split(',');
const GATEWAY_ENV = JSON.parse(process.env.BENCH_GATEWAY_ENV ?? '{}') as Record<string, string>;
const GATEWAY_NODE_FLAGS = (process.env.BENCH_GATEWAY_NODE_FLAGS ?? '').split(' ').filter(Boolean);
// BENCH_GATEWAY_BUILT=1: the gateways run apps/gateway/dist (npm run build first), as production
// does; by default the sources, transpiled on load (swc in the process adds ~20 MB of RSS).
const BUILT = process.env.BENCH_GATEWAY_BUILT === '1';
// BENCH_BASE=<checkout>: also preset agent (embedded) from another tree's sources, in the same
// rounds: a before/after on one machine at one moment (that tree's own node_modules).
const BASE = process.env.BENCH_BASE;

interface Target {
  key: string;
  name: string;
  proc: Proc;
  bare?: boolean;
}

interface Failure {
  session: string;
  turn: number;
  id: string;
  status: number | string;
  body: string;
}

interface Round {
  turnsPerSecond: number;
  p50: number;
  p99: number;
  cpuUs: number;
  failed: Failure[];
}

let runs = 0;

async function replay(t: Target, planFile: string, agents: number, turnsPerAgent: number): Promise<Round> {
  const cpu0 = cpuMsOf(t.proc.pid);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      join(__dirname, 'procs', 'session-client.cjs'),
      t.proc.url,
      planFile,
      String(agents),
      String(turnsPerAgent),
      `${t.key}-${process.pid}-${++runs}`,
      ...(t.bare ? ['bare'] : []),
    ],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  const r = JSON.parse(stdout) as { wallMs: number; ms: number[]; failed: Failure[] };
  const turns = r.ms.length;
  return {
    turnsPerSecond: (turns * 1000) / r.wallMs,
    p50: percentile(r.ms, 50),
    p99: percentile(r.ms, 99),
    cpuUs: ((cpuMsOf(t.proc.pid) - cpu0) * 1000) / turns,
    failed: r.failed,
  };
}

/** The corpus as the client reads it: one file of bodies per session, one body per line. */
export function writePlan(): { planFile: string; turns: number; meanKb: number } {
  const sessions = sessionCorpus();
  const plan = sessions.map((s, i) => {
    const file = writeTemp(`session-${i}.ndjson`, `${s.bodies.join('\n')}\n`);
    return { name: s.name, path: s.dialect === 'openai' ? '/openai/v1/chat/completions' : '/anthropic/v1/messages', file };
  });
  const bodies = sessions.flatMap((s) => s.bodies);
  const planFile = writeTemp('sessions-plan.json', JSON.stringify(plan));
  const meanKb = bodies.reduce((a, b) => a + Buffer.byteLength(b), 0) / bodies.length / 1000;
  return { planFile, turns: bodies.length, meanKb };
}

/** Everything a run started, stopped in reverse order at its end. */
interface Started {
  procs: Proc[];
  db?: FreshDatabase;
  redis?: { url: string; stop(): Promise<void> };
}

/** The bare proxy and the gateways the run measures (BENCH_TARGETS, BENCH_BASE), in front of `stub`. */
async function startTargets(stub: Proc, s: Started): Promise<Target[]> {
  const bare = await startScript('bare-proxy.cjs', [stub.url]);
  s.procs.push(bare);
  const gw = async (preset: string, env: Record<string, string> = {}, root?: string) => {
    const p = await startGatewayProc(
      { PRESET: preset, OPENAI_UPSTREAM: stub.url, ANTHROPIC_UPSTREAM: stub.url, LOG_LEVEL: 'warn', ...GATEWAY_ENV, ...env },
      GATEWAY_NODE_FLAGS,
      root,
      BUILT && !root,
    );
    s.procs.push(p);
    return p;
  };
  const want = (key: string) => !ONLY || ONLY.includes(key);
  const targets: Target[] = [{ key: 'bare', name: 'bare node:http + undici', proc: bare, bare: true }];
  if (want('off')) targets.push({ key: 'off', name: 'preset off, embedded', proc: await gw('off') });
  if (want('agent')) targets.push({ key: 'agent', name: 'preset agent, embedded', proc: await gw('agent') });
  if (BASE) targets.push({ key: 'agent-base', name: `preset agent, embedded, base tree (${BASE})`, proc: await gw('agent', {}, BASE) });
  if (want('agent-redis')) {
    s.db = await freshDatabase('sessions_bench');
    s.redis = await startPrivateRedis();
    const env = { REDIS_URL: s.redis.url, DATABASE_URL: s.db.url };
    targets.push({ key: 'agent-redis', name: 'preset agent, Redis + Postgres', proc: await gw('agent', env) });
  }
  return targets;
}

export async function runSessions(): Promise<string> {
  const { planFile, turns, meanKb } = writePlan();
  const stub = await startScript('upstream-stub.cjs');
  const started: Started = { procs: [stub] };
  try {
    const targets = await startTargets(stub, started);
    const rows: string[][] = [];
    const failures: string[] = [];
    for (const agents of AGENTS) {
      const perAgent = (passes: number) => Math.ceil((turns * passes) / agents);
      for (const t of targets) await replay(t, planFile, agents, perAgent(WARMUP_PASSES));
      const results = new Map<Target, Round[]>(targets.map((t) => [t, []]));
      for (let r = 0; r < ROUNDS; r++) {
        for (const t of rotated(targets, r)) results.get(t)?.push(await replay(t, planFile, agents, perAgent(PASSES)));
      }
      const base = results.get(targets[0]!) ?? [];
      for (const t of targets) {
        const rs = results.get(t) ?? [];
        const ratio = (f: (x: Round) => number, inverse = false) =>
          rs.map((x, i) => (inverse ? f(base[i] ?? x) / f(x) : f(x) / f(base[i] ?? x)));
        const ratios = ratio((x) => x.turnsPerSecond);
        const failed = rs.flatMap((x) => x.failed);
        for (const f of failed)
          failures.push(`- ${t.name}, ${agents} agent(s): ${f.session} turn ${f.turn} (${f.id}): ${f.status} ${f.body}`);
        rows.push([
          t.name,
          String(agents),
          median(rs.map((x) => x.turnsPerSecond)).toFixed(0),
          median(ratios).toFixed(2),
          `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`,
          median(rs.map((x) => x.p50)).toFixed(2),
          t.bare ? '' : median(rs.map((x, i) => x.p50 - (base[i]?.p50 ?? 0))).toFixed(2),
          median(rs.map((x) => x.p99)).toFixed(2),
          t.bare ? '' : median(ratio((x) => x.p99)).toFixed(2),
          median(rs.map((x) => x.cpuUs)).toFixed(0),
          `${(rssOf(t.proc.pid) / 1048576).toFixed(0)} MB`,
          String(failed.length),
        ]);
      }
    }
    const header = `${sessionCorpus().length} sessions (real and generated, both dialects), ${turns} turns, mean body ${meanKb.toFixed(0)} KB; each agent replays sessions turn by turn with a new session id per session, ${PASSES} corpus pass(es) per round shared by the agents after ${WARMUP_PASSES} warm-up passes per target; ${ROUNDS} interleaved rounds, order rotated; ratio = median over rounds of (target turns/s ÷ bare turns/s in the same round), spread = min–max; added p50 = median of (target p50 − bare p50) per round; p99 ÷ bare likewise; CPU µs / turn: the serving process's user + system time over the turns it answered; RSS of the serving process after that agent count's rounds. Gateways from ${BUILT ? 'apps/gateway/dist (built)' : 'the sources (transpiled on load)'}.`;
    const out = `${header}\n\n${table(['target', 'agents', 'turns/s', 'vs bare', 'spread', 'p50 ms', 'added p50 ms', 'p99 ms', 'p99 ÷ bare', 'CPU µs / turn', 'RSS after', 'failed turns'], rows)}`;
    return failures.length ? `${out}\n\nFailed turns:\n${failures.join('\n')}` : `${out}\n\nNo failed turn.`;
  } finally {
    for (const p of started.procs.reverse()) await p.stop();
    await started.redis?.stop();
    await started.db?.drop();
  }
}
