// What tracing costs: two in-process gateways on the same machine and the same requests, one with
// tracing off (no OTLP endpoint: the proxy holds no trace object) and one exporting every span to a
// real OTLP/HTTP receiver, measured in interleaved rounds so drift hits both alike. Reported as
// the median of per-round ratios of their median request latencies, and the same for a bare
// fetch of the upstream (what a request costs with no gateway at all).
import { openAiCompletion } from '../test/support/fake-upstream-json';
import { startFakeUpstream } from '../test/support/fake-upstream';
import { startGateway, type GatewayHarness } from '../test/support/gateway-harness';
import { startOtlpReceiver } from '../test/support/otlp-receiver';
import { agentSteps, openaiTurn } from '../test/support/transcripts';
import { percentile, table } from './bench-util';

const ROUNDS = 8;
const PER_ROUND = 40;

async function timed(url: string, body: string, session: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench', 'x-context-guru-session': session },
    body,
  });
  await res.text();
  return performance.now() - t0;
}

export async function runTracing(): Promise<string> {
  const upstream = await startFakeUpstream(() => ({ kind: 'json', body: openAiCompletion('Done.') }));
  const receiver = await startOtlpReceiver();
  const body = JSON.stringify(openaiTurn(agentSteps(30, 5), 30));
  const off = await startGateway(upstream.url, { PRESET: 'agent' }, { tracing: null });
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  let on: GatewayHarness;
  try {
    on = await startGateway(upstream.url, { PRESET: 'agent' });
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  }
  const targets: Array<[string, string]> = [
    ['bare upstream', `${upstream.url}/v1/chat/completions`],
    ['tracing off', `${off.url}/openai/v1/chat/completions`],
    ['tracing on', `${on.url}/openai/v1/chat/completions`],
  ];
  const medians = new Map<string, number[]>(targets.map(([n]) => [n, []]));
  try {
    for (const [, url] of targets) for (let i = 0; i < 10; i++) await timed(url, body, 'warm-up'); // warm caches and sessions
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order each round so neither side always runs first.
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const [name, url] of order) {
        const xs: number[] = [];
        for (let i = 0; i < PER_ROUND; i++) xs.push(await timed(url, body, 'warm-up'));
        medians.get(name)!.push(percentile(xs, 50));
      }
    }
  } finally {
    await off.close();
    await on.close();
    await upstream.close();
    await receiver.close();
  }
  const m = (n: string) => medians.get(n)!;
  const ratio = (a: string, b: string) => m(a).map((x, i) => x / m(b)[i]!);
  const row = (name: string) => {
    const r = ratio(name, 'tracing off');
    return [
      name,
      percentile(m(name), 50).toFixed(2),
      percentile(r, 50).toFixed(3),
      `${Math.min(...r).toFixed(3)}–${Math.max(...r).toFixed(3)}`,
    ];
  };
  const spans = receiver.spans.length;
  return `${table(
    ['target', 'median request ms', '× tracing off (median of rounds)', 'spread'],
    targets.map(([n]) => row(n)),
  )}\n\n${ROUNDS} rounds × ${PER_ROUND} sequential requests per target, ${(body.length / 1024).toFixed(0)} KB OpenAI body, preset agent; ${spans} spans reached the OTLP receiver.`;
}
