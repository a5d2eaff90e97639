// Overload: 1,000 concurrent 200 KB agent requests (each a new session, so each would be new
// compression work) against a gateway (preset agent, embedded stores) whose upstream answers after
// a fixed delay, and in the same run, alternating round by round, the same burst against the bare
// node:http + undici pass-through on the same stub — the baseline for latency and failures (a
// refused connection there is the machine's, not the gateway's). Alongside each gateway burst, one
// Anthropic session replays turn after turn against a recording upstream, and every forwarded
// prefix is checked against the previous turn's (a changed byte while the provider still holds the
// prefix is a cache bust). Reports client latency against the upstream's own, the gateway's peak
// RSS, the CPU each serving process spent per request (contention does not inflate it), how many
// requests were shed, what the failures were, and the busts. BENCH_OVERLOAD_BASE=<checkout> adds a
// gateway from another tree's sources (its `npm ci` done) to every round: old and new side by side.
// BENCH_OVERLOAD_DISTINCT=1 gives every request message texts of its own (procs/burst-client.cjs):
// by default all 1,000 bodies are the same bytes, so what the gateway memoises by content (token
// counts, content keys) is computed once for the whole burst.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startFakeUpstream } from '../test/support/fake-upstream';
import { jsonScript } from '../test/support/scripted-model';
import { agentSteps, anthropicTurn } from '../test/support/transcripts';
import { agentPayload } from './agent-payload';
import { cpuMsOf, rssOf, startGatewayProc, startScript, writeTemp, type Proc } from './bench-procs';
import { percentile, table } from './bench-util';

const COUNT = Number(process.env.BENCH_OVERLOAD_COUNT ?? 1000);
const DELAY_MS = Number(process.env.BENCH_UPSTREAM_DELAY_MS ?? 500);
const ROUNDS = Number(process.env.BENCH_OVERLOAD_ROUNDS ?? 2);
const BASE = process.env.BENCH_OVERLOAD_BASE;

interface Burst {
  wallMs: number;
  /** Latencies of the requests answered 200. */
  ms: number[];
  failed: number;
  /** When each failure came, from the request's start. */
  failedMs: number[];
  reasons: Record<string, number>;
}

async function burst(url: string, bodyFile: string, prefix: string): Promise<Burst> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(__dirname, 'procs', 'burst-client.cjs'), url, bodyFile, String(COUNT), '{}', prefix],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  return JSON.parse(stdout) as Burst;
}

/** Turns of one Anthropic session, sequential, while `flooding()` (at least 5), and the busts seen. */
async function replayedSession(
  gw: Proc,
  recorder: { requests: Array<{ body: Record<string, unknown> }> },
  session: string,
  flooding: () => boolean,
) {
  const steps = agentSteps(40, 5);
  const from = recorder.requests.length;
  let turns = 0;
  for (let t = 1; t <= 40 && (flooding() || t <= 5); t++) {
    const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-context-guru-session': session },
      body: JSON.stringify(anthropicTurn(steps, t)),
    });
    await res.text();
    turns++;
  }
  // Breakpoint placement is not part of a provider's cache key (cacheinject moves it each turn).
  const canonical = (m: unknown) => JSON.stringify(m, (k, v: unknown) => (k === 'cache_control' ? undefined : v));
  const sent = recorder.requests.slice(from).map((r) => (r.body.messages as unknown[]).map(canonical));
  let busts = 0;
  const where: string[] = [];
  for (let i = 1; i < sent.length; i++) {
    const k = sent[i - 1]!.findIndex((m, j) => sent[i]![j] !== m);
    if (k < 0) continue;
    busts++;
    where.push(`turn ${i + 1} message ${k} of ${sent[i - 1]!.length}`);
  }
  if (where.length) process.stderr.write(`overload: busts in ${session}: ${where.join('; ')}\n`);
  return { turns, busts };
}

const shedCount = async (gw: Proc) => Number(/^cg_shed_total (\d+)/m.exec(await (await fetch(`${gw.url}/metrics`)).text())?.[1] ?? 0);
const failedSpan = (ms: number[]) => `${(Math.min(...ms) / 1000).toFixed(0)}–${(Math.max(...ms) / 1000).toFixed(0)} s`;
const reasonText = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ') || '—';

/** The burst against `p` (at `url`), with the CPU ms that process spent per request. */
async function measured(p: Proc, url: string, bodyFile: string, prefix: string): Promise<Burst & { cpuMs: number }> {
  const cpu0 = cpuMsOf(p.pid);
  const b = await burst(url, bodyFile, prefix);
  return { ...b, cpuMs: (cpuMsOf(p.pid) - cpu0) / COUNT };
}

export async function runOverload(): Promise<string> {
  const stub = await startScript('upstream-stub.cjs', [String(DELAY_MS)]);
  const bare = await startScript('bare-proxy.cjs', [stub.url]);
  const recorder = await startFakeUpstream(jsonScript({ expand: false }));
  const env = { PRESET: 'agent', OPENAI_UPSTREAM: stub.url, ANTHROPIC_UPSTREAM: recorder.url };
  const gateways: Array<{ label: string; proc: Proc; peak: number; idle: number }> = [];
  const bodyFile = writeTemp('body200k.json', agentPayload(200_000).raw);
  const kb = `${(agentPayload(200_000).raw.length / 1000).toFixed(0)} KB`;
  // The bare proxy's RSS too: what holding a burst's bodies costs a process that does nothing else.
  const bareRss = { idle: rssOf(bare.pid), peak: 0 };
  const timer = setInterval(() => {
    bareRss.peak = Math.max(bareRss.peak, rssOf(bare.pid));
    gateways.forEach((g) => (g.peak = Math.max(g.peak, rssOf(g.proc.pid))));
  }, 20);
  const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
  const rows: string[][] = [];
  const ratios: Record<string, number[]> = {};
  try {
    for (const [label, root] of [['context-guru, preset agent', undefined], ...(BASE ? [[`base (${BASE}), preset agent`, BASE]] : [])]) {
      const proc = await startGatewayProc(env, [], root);
      gateways.push({ label: label!, proc, peak: 0, idle: rssOf(proc.pid) });
    }
    for (let round = 1; round <= ROUNDS; round++) {
      bareRss.peak = rssOf(bare.pid);
      const b = await measured(bare, `${bare.url}/v1/chat/completions`, bodyFile, `bare-${round}`);
      const bareExcess = Math.max(1, percentile(b.ms, 99) - DELAY_MS);
      rows.push(row(round, 'bare node:http + undici', kb, b, '', mb(bareRss.idle), mb(bareRss.peak), '', ''));
      for (const g of gateways) {
        g.peak = rssOf(g.proc.pid);
        const shedBefore = await shedCount(g.proc);
        let flooding = true;
        const replay = replayedSession(g.proc, recorder, `replayed-${round}-${gateways.indexOf(g)}`, () => flooding);
        const r = await measured(g.proc, `${g.proc.url}/openai/v1/chat/completions`, bodyFile, `burst-${round}`);
        flooding = false;
        const { turns, busts } = await replay;
        const shed = (await shedCount(g.proc)) - shedBefore;
        (ratios[g.label] ??= []).push((percentile(r.ms, 99) - DELAY_MS) / bareExcess);
        rows.push(row(round, g.label, kb, r, `${shed}`, mb(g.idle), mb(g.peak), `${turns}`, `${busts}`));
      }
    }
    return [
      `${COUNT} concurrent requests (one connection each, each a new session${process.env.BENCH_OVERLOAD_DISTINCT ? ', each with message texts of its own' : ''}), upstream stub answering after ${DELAY_MS} ms; ${ROUNDS} rounds, the bare proxy and the gateway${BASE ? 's' : ''} alternating; one replayed Anthropic session alongside each gateway burst. Latencies are of the requests answered 200; failures are listed by kind; CPU is the serving process's (user + system) per request of the burst.`,
      '',
      table(
        [
          'round',
          'target',
          'body',
          'p50 ms',
          'p99 ms',
          'p99 − upstream ms',
          'CPU ms/req',
          'failed',
          'shed',
          'RSS idle',
          'RSS peak',
          'replayed turns',
          'busts',
        ],
        rows,
      ),
      '',
      ...Object.entries(ratios).map(
        ([label, rs]) => `${label}: (p99 − upstream) ÷ (bare p99 − upstream), per round: ${rs.map((r) => r.toFixed(2)).join(', ')}`,
      ),
    ].join('\n');
  } finally {
    clearInterval(timer);
    for (const g of gateways) await g.proc.stop();
    await recorder.close();
    await bare.stop();
    await stub.stop();
  }
}

function row(round: number, target: string, kb: string, b: Burst & { cpuMs: number }, ...rest: string[]): string[] {
  const p = (q: number) => percentile(b.ms, q);
  return [
    String(round),
    target,
    kb,
    p(50).toFixed(0),
    p(99).toFixed(0),
    (p(99) - DELAY_MS).toFixed(0),
    b.cpuMs.toFixed(1),
    b.failed ? `${b.failed} (${reasonText(b.reasons)}; after ${failedSpan(b.failedMs)})` : '0',
    ...rest,
  ];
}
