// Usage and money through the real gateway: what /metrics and /stats say the provider billed is
// exactly what the fake provider reported, for all three dialects, streamed and not, with the answers
// the expand loop consumed counted apart from the ones the client got, and compaction-model calls
// apart again. The money figures follow from the price table and hang together.
import { startFakeModel, program, type FakeModelServer } from '../support/fake-model-server';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { metricSum, scrape } from '../support/metrics-text';
import {
  KINDS,
  MODELS,
  SESSION_CONFIG,
  runObservedSession,
  startObservedUpstream,
  type ObservedUpstream,
} from '../support/observed-session';
import { agentSteps, openaiTurn } from '../support/transcripts';
import { createPriceTable } from '../../libs/engine/src/report/price-table';

const DIALECTS = ['anthropic', 'openai', 'responses'] as const;
let up: ObservedUpstream;
let gateway: GatewayHarness;
let requests = 0;

type Stats = Record<string, unknown> & { requests: number };
const stats = async (url: string): Promise<Stats> => (await (await fetch(`${url}/stats`)).json()) as Stats;

/** Streams are recorded when they end: wait until the gateway has recorded `n` requests. */
async function recorded(url: string, n: number): Promise<Stats> {
  for (let i = 0; i < 500; i++) {
    const s = await stats(url);
    if (s.requests >= n) return s;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`the gateway did not record ${n} requests`);
}

beforeAll(async () => {
  up = await startObservedUpstream();
  gateway = await startGateway(up.upstream.url, { CONFIG: SESSION_CONFIG });
  requests = await runObservedSession(gateway.url, up);
  await recorded(gateway.url, requests);
});
afterAll(async () => {
  await gateway.close();
  await up.close();
});

describe('provider-reported usage is exported exactly', () => {
  it('the session made expand rounds in every dialect, so both origins carry usage', () => {
    for (const d of DIALECTS) {
      expect(up.ledger.expand[d].output).toBeGreaterThan(0);
      expect(up.ledger.client[d].output).toBeGreaterThan(0);
    }
    expect(up.ledger.client.anthropic.cache_read + up.ledger.client.openai.cache_read).toBeGreaterThan(0);
    expect(up.ledger.client.responses.cache_read).toBeGreaterThan(0);
  });

  it('cg_usage_tokens_total equals the fake provider ledger per origin, dialect and kind', async () => {
    const m = await scrape(gateway.url);
    for (const origin of ['client', 'expand'] as const) {
      for (const dialect of DIALECTS) {
        for (const kind of KINDS) {
          const exported = metricSum(m, 'cg_usage_tokens_total', { tenant: 'default', origin, dialect, kind });
          expect({ origin, dialect, kind, tokens: exported }).toEqual({ origin, dialect, kind, tokens: up.ledger[origin][dialect][kind] });
        }
      }
    }
  });

  it('cg_billed_usd_total prices that usage at the model family rates', async () => {
    const m = await scrape(gateway.url);
    const prices = createPriceTable();
    for (const origin of ['client', 'expand'] as const) {
      for (const dialect of DIALECTS) {
        const p = prices.lookup(dialect, MODELS[dialect]);
        const u = up.ledger[origin][dialect];
        const expected = (u.fresh * p.input + u.cache_read * p.cache_read + u.cache_write * p.cache_write + u.output * p.output) / 1e6;
        expect(metricSum(m, 'cg_billed_usd_total', { origin, dialect, family: p.family })).toBeCloseTo(expected, 9);
      }
    }
    expect(prices.lookup('anthropic', MODELS.anthropic).family).toBe('claude-sonnet');
    expect(prices.lookup('openai', MODELS.openai).family).toBe('gpt-4o');
    expect(prices.lookup('responses', MODELS.responses).family).toBe('gpt-4o');
  });

  it('/stats carries the same usage, and the money figures are consistent with each other', async () => {
    const s = await stats(gateway.url);
    expect(s.tenant).toBe('default');
    const money = s.money as Record<string, any>;
    for (const origin of ['client', 'expand'] as const) {
      for (const kind of KINDS) expect(money.usage[origin][kind]).toBe(DIALECTS.reduce((n, d) => n + up.ledger[origin][d][kind], 0));
    }
    const saved = money.saved_tokens;
    expect(saved.cumulative).toBe(saved.prefix + saved.tail);
    expect(saved.cumulative).toBeGreaterThan(0);
    expect(saved.unique).toBeGreaterThan(0);
    expect(saved.unique).toBeLessThanOrEqual(saved.cumulative);
    expect(money.saved_usd_gross).toBeCloseTo(money.saved_usd_prefix + money.saved_usd_tail, 5);
    expect(money.overhead_usd).toBeCloseTo(money.billed_usd.expand + money.billed_usd.model, 5);
    expect(money.saved_usd_net).toBeCloseTo(money.saved_usd_gross - money.overhead_usd, 5);
    expect(money.bill_without_usd).toBeCloseTo(money.billed_usd.client + money.saved_usd_gross, 5);
    expect(money.bill_with_usd).toBeCloseTo(money.billed_usd.total, 6);
  });

  it('saved tokens and their value are exported per tenant, preset and position', async () => {
    const m = await scrape(gateway.url);
    const s = (await stats(gateway.url)).money as Record<string, any>;
    expect(metricSum(m, 'cg_saved_tokens_total', { tenant: 'default', preset: 'custom', where: 'prefix' })).toBe(s.saved_tokens.prefix);
    expect(metricSum(m, 'cg_saved_tokens_total', { where: 'tail' })).toBe(s.saved_tokens.tail);
    expect(metricSum(m, 'cg_saved_unique_tokens_total', {})).toBeCloseTo(s.saved_tokens.unique, 0);
    expect(metricSum(m, 'cg_saved_usd_total', {})).toBeCloseTo(s.saved_usd_gross, 6);
    // Every dialect's session saved, each under its own label, and the totals are their sums.
    for (const dialect of DIALECTS) {
      expect({ dialect, saved: metricSum(m, 'cg_saved_tokens_total', { dialect }) > 0 }).toEqual({ dialect, saved: true });
      expect({ dialect, usd: metricSum(m, 'cg_saved_usd_total', { dialect }) > 0 }).toEqual({ dialect, usd: true });
      expect(metricSum(m, 'cg_upstream_responses_total', { dialect, status: '2xx' })).toBeGreaterThanOrEqual(4);
    }
  });
});

describe('compaction-model calls are billed apart', () => {
  let model: FakeModelServer;
  beforeAll(async () => {
    model = await startFakeModel(() => ({
      ...program('return INPUT.split("\\n").slice(0, 3).join("\\n");'),
      inputTokens: 1234,
      outputTokens: 56,
    }));
  });
  afterAll(async () => model.close());

  it('cg_usage_tokens_total{origin="model"} equals what the compaction model reported', async () => {
    const gw = await startGateway(up.upstream.url, {
      CONFIG: 'pipeline: [extract]\ncomponents:\n  extract: { strategy: code, model: { source: config } }\n',
      CHEAP_MODEL: 'claude-haiku-4-5',
      CHEAP_MODEL_PROVIDER: 'anthropic',
      CHEAP_MODEL_BASE: model.url,
      CHEAP_MODEL_KEY: 'sk-cheap',
    });
    try {
      const steps = agentSteps(6, 31);
      const res = await fetch(`${gw.url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-m', 'x-context-guru-session': 'model-spend' },
        body: JSON.stringify(openaiTurn(steps, 6, { model: MODELS.openai })),
      });
      expect(res.status).toBe(200);
      await res.text();
      await recorded(gw.url, 1);
      expect(model.calls.length).toBeGreaterThan(0);
      const spend = (await stats(gw.url)) as Record<string, any>;
      const m = await scrape(gw.url);
      const input = metricSum(m, 'cg_usage_tokens_total', { origin: 'model', dialect: 'anthropic', kind: 'fresh' });
      const output = metricSum(m, 'cg_usage_tokens_total', { origin: 'model', dialect: 'anthropic', kind: 'output' });
      expect(input).toBe(spend.llm_input_tokens);
      expect(output).toBe(spend.llm_output_tokens);
      expect(input).toBe(1234 * model.calls.length);
      expect(output).toBe(56 * model.calls.length);
      const p = createPriceTable().lookup('anthropic', 'claude-haiku-4-5');
      expect(p.family).toBe('claude-haiku-4.5');
      expect(metricSum(m, 'cg_billed_usd_total', { origin: 'model', family: p.family })).toBeCloseTo(
        (input * p.input + output * p.output) / 1e6,
        9,
      );
      expect(spend.money.billed_usd.model).toBeCloseTo((input * p.input + output * p.output) / 1e6, 6);
    } finally {
      await gw.close();
    }
  });
});
