// Overload: 1,000 concurrent 200 KB agent requests (each a new session, so each would be new
// compression work) against a gateway (preset agent, embedded stores) whose upstream answers after
// a fixed delay, and in the same run, alternating round by round, the same burst against the bare
// node:http + undici pass-through on the same stub — the baseline for latency and failures (a
// refused connection there is the machine's, not the gateway's). Alongside each gateway burst, one
// Anthropic session replays turn after turn against a recording upstream, and every forwarded
// prefix is checked against the previous turn's (a changed byte while the provider still holds the
// prefix is a cache bust). Reports client latency against the upstream's own, the gateway's peak
// RSS, how many requests were shed, what the failures were, and the busts.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startFakeUpstream } from '../test/support/fake-upstream';
import { jsonScript } from '../test/support/scripted-model';
import { agentSteps, anthropicTurn } from '../test/support/transcripts';
import { agentPayload } from './agent-payload';
import { rssOf, startGatewayProc, startScript, writeTemp, type Proc } from './bench-procs';
import { percentile, table } from './bench-util';

const COUNT = Number(process.env.BENCH_OVERLOAD_COUNT ?? 1000);
const DELAY_MS = Number(process.env.BENCH_UPSTREAM_DELAY_MS ?? 500);
const ROUNDS = Number(process.env.BENCH_OVERLOAD_ROUNDS ?? 2);

interface Burst {
  wallMs: number;
  /** Latencies of the requests answered 200. */
  ms: number[];
  failed: number;
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
const reasonText = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ') || '—';

export async function runOverload(): Promise<string> {
  const stub = await startScript('upstream-stub.cjs', [String(DELAY_MS)]);
  const bare = await startScript('bare-proxy.cjs', [stub.url]);
  const recorder = await startFakeUpstream(jsonScript({ expand: false }));
  const gw = await startGatewayProc({ PRESET: 'agent', OPENAI_UPSTREAM: stub.url, ANTHROPIC_UPSTREAM: recorder.url });
  const bodyFile = writeTemp('body200k.json', agentPayload(200_000).raw);
  const kb = `${(agentPayload(200_000).raw.length / 1000).toFixed(0)} KB`;
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(gw.pid))), 20);
  const rows: string[][] = [];
  const p99s: Record<'bare' | 'gw', number[]> = { bare: [], gw: [] };
  try {
    const idle = rssOf(gw.pid);
    for (let round = 1; round <= ROUNDS; round++) {
      const b = await burst(`${bare.url}/v1/chat/completions`, bodyFile, `bare-${round}`);
      p99s.bare.push(percentile(b.ms, 99));
      rows.push(row(round, 'bare node:http + undici', kb, b, '', '', '', '', ''));
      peak = rssOf(gw.pid);
      const shedBefore = await shedCount(gw);
      let flooding = true;
      const replay = replayedSession(gw, recorder, `replayed-${round}`, () => flooding);
      const g = await burst(`${gw.url}/openai/v1/chat/completions`, bodyFile, `burst-${round}`);
      flooding = false;
      const { turns, busts } = await replay;
      const shed = (await shedCount(gw)) - shedBefore;
      p99s.gw.push(percentile(g.ms, 99));
      rows.push(
        row(
          round,
          'context-guru, preset agent',
          kb,
          g,
          `${shed}`,
          `${(idle / 1048576).toFixed(0)} MB`,
          `${(peak / 1048576).toFixed(0)} MB`,
          `${turns}`,
          `${busts}`,
        ),
      );
    }
    const ratios = p99s.gw.map((p, i) => (p - DELAY_MS) / Math.max(1, p99s.bare[i]! - DELAY_MS));
    return [
      `${COUNT} concurrent requests (one connection each, each a new session), upstream stub answering after ${DELAY_MS} ms; ${ROUNDS} rounds, the bare proxy and the gateway alternating; one replayed Anthropic session alongside each gateway burst. Latencies are of the requests answered 200; failures are listed by kind.`,
      '',
      table(
        [
          'round',
          'target',
          'body',
          'p50 ms',
          'p99 ms',
          'p99 − upstream ms',
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
      `(gateway p99 − upstream) ÷ (bare p99 − upstream), per round: ${ratios.map((r) => r.toFixed(2)).join(', ')}`,
    ].join('\n');
  } finally {
    clearInterval(timer);
    await gw.stop();
    await recorder.close();
    await bare.stop();
    await stub.stop();
  }
}

function row(round: number, target: string, kb: string, b: Burst, ...rest: string[]): string[] {
  const p = (q: number) => percentile(b.ms, q);
  return [
    String(round),
    target,
    kb,
    p(50).toFixed(0),
    p(99).toFixed(0),
    (p(99) - DELAY_MS).toFixed(0),
    b.failed ? `${b.failed} (${reasonText(b.reasons)})` : '0',
    ...rest,
  ];
}
