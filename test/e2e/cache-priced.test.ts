// Priced rewrites through the real gateway with preset auto: a real agent
// session (bench/corpus-real) replayed turn by turn against a provider that bills like a prompt
// cache. A turn may change what the provider cached only as a planned rewrite: its response says
// `x-context-guru-rewrite: planned; from=<index>`, the forwarded prefix changes exactly from that
// message, /stats and /metrics count it apart from the cache guard's reverts, and the session is
// billed less than the client's own bodies would have been.
import { REWRITE_HEADER } from '../../apps/gateway/src/proxy/chat/respond.step';
import { realCorpus, realRequest, type RealSession } from '../../bench/real-corpus';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { metricSum, scrape } from '../support/metrics-text';
import { PromptCacheSim, cachingScript, prefixBust, type BilledRequest } from '../support/prompt-cache';
import { jsonScript } from '../support/scripted-model';

jest.setTimeout(120_000);

const SESSION: RealSession = realCorpus().find((s) => s.id === 'real-openhands-llama4-ponyc-4595') ?? realCorpus()[0]!;
const ROUTE: Record<'anthropic' | 'openai', string> = { anthropic: '/anthropic/v1/messages', openai: '/openai/v1/chat/completions' };

describe.each(['anthropic', 'openai'] as const)('priced rewrites on %s, preset auto', (dialect) => {
  let upstream: FakeUpstream;
  let gateway: GatewayHarness;
  let now = 1_700_000_000_000;
  const billed: BilledRequest[] = [];
  const turns: Array<{ header: string | null; from: number }> = [];
  let withoutUsd = 0;

  beforeAll(async () => {
    upstream = await startFakeUpstream(cachingScript(new PromptCacheSim({ now: () => now }), jsonScript({ expand: false }), billed));
    gateway = await startGateway(upstream.url, { PRESET: 'auto' }, { clock: { now: () => now } });
    const bypass = new PromptCacheSim({ now: () => now });
    let prev: Record<string, unknown> | undefined;
    for (let t = 1; t <= SESSION.stats.requests; t++) {
      now += 30_000;
      const body = realRequest(SESSION, dialect, t);
      withoutUsd += bypass.bill('client', dialect, body, 10).usd;
      const res = await fetch(`${gateway.url}${ROUTE[dialect]}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-priced', 'x-context-guru-session': `priced-${dialect}` },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      await res.json();
      const sent = billed[billed.length - 1]!.body;
      turns.push({ header: res.headers.get(REWRITE_HEADER), from: prev ? prefixBust(prev, sent) : -1 });
      prev = sent;
    }
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('changes the cached prefix only on turns that announce a planned rewrite, from the message they name', () => {
    const planned = turns.filter((t) => t.header !== null);
    expect(planned.length).toBeGreaterThan(0);
    for (const t of turns) expect(t.header).toBe(t.from >= 0 ? `planned; from=${t.from}` : null);
  });

  it('counts them in /stats and /metrics apart from the cache guard, which reverted nothing', async () => {
    const planned = turns.filter((t) => t.header !== null).length;
    const stats = (await (await fetch(`${gateway.url}/stats`)).json()) as Record<string, number>;
    expect(stats.planned_rewrites).toBe(planned);
    expect(stats.cache_guard_reverts).toBe(0);
    expect(stats.planned_rewrite_saving_per_turn_tokens).toBeGreaterThan(0);
    const samples = await scrape(gateway.url);
    expect(metricSum(samples, 'cg_planned_rewrites_total', {})).toBe(planned);
    expect(metricSum(samples, 'cg_planned_rewrite_tokens_total', { kind: 'saving_per_turn' })).toBeGreaterThan(0);
  });

  it('bills the session less than the client bodies alone', () => {
    const withUsd = billed.reduce((n, b) => n + b.bill.usd, 0);
    expect(withUsd).toBeLessThan(withoutUsd * 0.9);
  });
});
