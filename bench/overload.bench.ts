// Overload: 1,000 concurrent 200 KB agent requests (each a new session, so each would be new
// compression work) against a gateway (preset agent, embedded stores) whose upstream answers after
// a fixed delay; alongside, one Anthropic session replays turn after turn against a recording
// upstream, and every forwarded prefix is checked against the previous turn's (a changed byte
// while the provider still holds the prefix is a cache bust). Reports client latency against the
// upstream's own, the gateway's peak RSS, how many requests were shed, and the busts.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startFakeUpstream } from '../test/support/fake-upstream';
import { jsonScript } from '../test/support/scripted-model';
import { agentSteps, anthropicTurn } from '../test/support/transcripts';
import { agentPayload } from './agent-payload';
import { rssOf, startGatewayProc, startScript, writeTemp } from './bench-procs';
import { percentile, table } from './bench-util';

const COUNT = Number(process.env.BENCH_OVERLOAD_COUNT ?? 1000);
const DELAY_MS = Number(process.env.BENCH_UPSTREAM_DELAY_MS ?? 500);

export async function runOverload(): Promise<string> {
  const stub = await startScript('upstream-stub.cjs', [String(DELAY_MS)]);
  const recorder = await startFakeUpstream(jsonScript({ expand: false }));
  const gw = await startGatewayProc({ PRESET: 'agent', OPENAI_UPSTREAM: stub.url, ANTHROPIC_UPSTREAM: recorder.url });
  const bodyFile = writeTemp('body200k.json', agentPayload(200_000).raw);
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(gw.pid))), 20);
  const steps = agentSteps(40, 5);
  let busts = 0;
  let turns = 0;
  let flooding = true;
  try {
    const idle = rssOf(gw.pid);
    // The replayed session, sequential, for as long as the flood lasts (and at least 5 turns).
    const replay = (async () => {
      for (let t = 1; t <= 40 && (flooding || t <= 5); t++) {
        const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-context-guru-session': 'replayed' },
          body: JSON.stringify(anthropicTurn(steps, t)),
        });
        await res.text();
        turns++;
      }
    })();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(__dirname, 'procs', 'burst-client.cjs'), `${gw.url}/openai/v1/chat/completions`, bodyFile, String(COUNT)],
      { encoding: 'utf8', maxBuffer: 1 << 24 },
    );
    flooding = false;
    await replay;
    const burst = JSON.parse(stdout) as { wallMs: number; ms: number[]; failed: number };
    // Breakpoint placement is not part of a provider's cache key (cacheinject moves it each turn).
    const canonical = (m: unknown) => JSON.stringify(m, (k, v: unknown) => (k === 'cache_control' ? undefined : v));
    const sent = recorder.requests.map((r) => (r.body.messages as unknown[]).map(canonical));
    for (let i = 1; i < sent.length; i++) if (sent[i - 1]!.some((m, k) => sent[i]![k] !== m)) busts++;
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    const shed = Number(/^cg_shed_total (\d+)/m.exec(metrics)?.[1] ?? 0);
    const p = (q: number) => percentile(burst.ms, q);
    const rows = [
      [
        String(COUNT),
        `${(agentPayload(200_000).raw.length / 1000).toFixed(0)} KB`,
        `${DELAY_MS}`,
        p(50).toFixed(0),
        p(99).toFixed(0),
        (p(99) - DELAY_MS).toFixed(0),
        String(burst.failed),
        `${shed}`,
        `${(idle / 1048576).toFixed(0)} MB`,
        `${(peak / 1048576).toFixed(0)} MB`,
        `${turns}`,
        `${busts}`,
      ],
    ];
    return `${COUNT} concurrent requests (one connection each, each a new session), upstream stub answering after ${DELAY_MS} ms; one replayed Anthropic session alongside.\n\n${table(['requests', 'body', 'upstream ms', 'p50 ms', 'p99 ms', 'p99 − upstream ms', 'failed', 'shed', 'RSS idle', 'RSS peak', 'replayed turns', 'busts'], rows)}`;
  } finally {
    clearInterval(timer);
    await gw.stop();
    await recorder.close();
    await stub.stop();
  }
}
