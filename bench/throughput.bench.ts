// Requests per second at a 60 KB agent body: the gateway (presets off and agent, embedded stores)
// against a bare node:http + undici pass-through, all in front of the same upstream stub, each in
// its own process. The machine is shared and drifts, so targets run in interleaved rounds (the
// order rotated every round) and each figure is the median of per-round ratios to the bare proxy
// of the same round, with the spread (min–max) of those ratios beside it.
import { agentPayload } from './agent-payload';
import { cpuMsOf, load, rssOf, startGatewayProc, startScript, writeTemp, type LoadResult, type Proc } from './bench-procs';
import { table } from './bench-util';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
// Steady state, not start-up. A fresh agent gateway at 1 connection costs ~4,000 µs of CPU per
// request in its first 2 s and settles near 550–700 only after ~8 s (≈ 5,000 requests: TurboFan
// tiering up a large code base; --trace-deopt shows ~40 deopts in all, no deopt loop), so a 5 s
// warm-up left the agent's first rounds at 2,000 µs and its 1-connection ratio near 0.25.
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,32').split(',').map(Number);
// Node flags for every proxy measured (the bare one and both gateways alike), e.g. V8 heap flags
// when studying what garbage collection costs each of them; none by default.
// A subset of the targets, e.g. `bare,off` (the bare proxy is always measured: it is the baseline).
const ONLY = process.env.BENCH_TARGETS?.split(',');
// Extra environment for both gateways (a JSON object), e.g. to compare a setting in one run.
const GATEWAY_ENV = JSON.parse(process.env.BENCH_GATEWAY_ENV ?? '{}') as Record<string, string>;
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const GATEWAY_NODE_FLAGS = (process.env.BENCH_GATEWAY_NODE_FLAGS ?? '').split(' ').filter(Boolean);

interface Target {
  name: string;
  proc: Proc;
  path: string;
  headers?: Record<string, string>;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Round r runs the targets starting at index r, so no target always runs first or last. */
export function rotated<T>(xs: readonly T[], r: number): T[] {
  const k = r % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

export async function runThroughput(): Promise<string> {
  const { raw } = agentPayload(60_000);
  const bodyFile = writeTemp('body60k.json', raw);
  const stub = await startScript('upstream-stub.cjs');
  const procs: Proc[] = [stub];
  try {
    const bare = await startScript('bare-proxy.cjs', [stub.url], NODE_FLAGS);
    procs.push(bare);
    const gw = (preset: string) =>
      startGatewayProc({ PRESET: preset, OPENAI_UPSTREAM: stub.url, ANTHROPIC_UPSTREAM: stub.url, ...GATEWAY_ENV }, [
        ...NODE_FLAGS,
        ...GATEWAY_NODE_FLAGS,
      ]);
    const off = await gw('off');
    procs.push(off);
    const agent = await gw('agent');
    procs.push(agent);
    const session = { 'x-context-guru-session': 'bench' };
    const targets: Target[] = [
      { name: 'upstream stub, direct', proc: stub, path: '/v1/chat/completions' },
      { name: 'bare node:http + undici', proc: bare, path: '/v1/chat/completions' },
      { name: 'context-guru, preset off', proc: off, path: '/openai/v1/chat/completions', headers: session },
      { name: 'context-guru, preset agent', proc: agent, path: '/openai/v1/chat/completions', headers: session },
    ].filter((t, i) => i === 1 || !ONLY || ONLY.includes(['stub', 'bare', 'off', 'agent'][i]!));
    // CPU per request of the serving process itself is steadier than req/s on a shared machine.
    const run = async (t: Target, c: number, s: number) => {
      const cpu0 = cpuMsOf(t.proc.pid);
      const r = await load(`${t.proc.url}${t.path}`, bodyFile, c, s, t.headers);
      return { ...r, cpuUs: ((cpuMsOf(t.proc.pid) - cpu0) * 1000) / (r.rps * s) };
    };
    const rows: string[][] = [];
    for (const c of CONNECTIONS) {
      for (const t of targets) await run(t, c, WARMUP_SECONDS); // warm-up: JIT, pools, the agent's first turns
      const results = new Map<Target, Array<LoadResult & { cpuUs: number }>>(targets.map((t) => [t, []]));
      for (let r = 0; r < ROUNDS; r++) {
        for (const t of rotated(targets, r)) results.get(t)!.push(await run(t, c, SECONDS));
      }
      const base = results.get(targets.find((t) => t.proc === bare)!)!;
      for (const t of targets) {
        const rs = results.get(t)!;
        const ratios = rs.map((x, i) => x.rps / base[i]!.rps);
        const rss = t.proc === stub || t.proc === bare ? '' : `${(rssOf(t.proc.pid) / 1048576).toFixed(0)} MB`;
        rows.push([
          t.name,
          String(c),
          median(rs.map((x) => x.rps)).toFixed(0),
          median(ratios).toFixed(2),
          `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`,
          median(rs.map((x) => x.p50)).toFixed(1),
          median(rs.map((x) => x.cpuUs)).toFixed(0),
          median(rs.map((x, i) => base[i]!.cpuUs / x.cpuUs)).toFixed(2),
          rss,
        ]);
      }
    }
    const header = `${(raw.length / 1000).toFixed(0)} KB pretty-printed OpenAI agent body (real command outputs, text before parallel tool calls), ${ROUNDS} interleaved rounds × ${SECONDS} s per target and connection count after a ${WARMUP_SECONDS} s warm-up each, order rotated each round; ratio = median over rounds of (target req/s ÷ bare req/s in the same round), spread = min–max of those ratios. CPU µs / request: the serving process's own user + system time (from /proc) over the requests it answered — robust to contention, so its ratio shows what the req/s ratio would be on an idle machine. Gateways: embedded stores (memory + PGlite), same session every request.`;
    return `${header}\n\n${table(['target', 'connections', 'req/s (median)', 'vs bare (median of ratios)', 'spread', 'p50 ms', 'CPU µs / request', 'bare CPU ÷ target CPU', 'gateway RSS after'], rows)}`;
  } finally {
    for (const p of procs.reverse()) await p.stop();
  }
}
