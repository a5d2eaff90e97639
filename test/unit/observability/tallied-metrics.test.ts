// Component and usage figures are tallied per request and added to their counters when /metrics
// is read: a scrape shows exactly what direct increments showed, between scrapes and across them.
import { REGISTRY, blankReport, type Report } from '@context-guru/components';
import { GatewayMetrics } from '../../../apps/gateway/src/observability/metrics';
import { primeComponents, recordRequest } from '../../../apps/gateway/src/observability/metrics-record';
import { createPriceTable } from '../../../libs/engine/src/report/price-table';
import { emptyReport } from '../../../libs/engine/src/report/request-report';
import { UsageAccounting } from '../../../apps/gateway/src/observability/usage-accounting';

function run(component: string, over: Partial<Report> = {}): Report {
  return { ...blankReport(component, 'reformat', 100), durationMs: 2, ...over };
}

function enforced(reports: Report[]) {
  const r = emptyReport('openai', 'default');
  r.enforced = true;
  r.reports = reports;
  return r;
}

function series(text: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const cut = line.lastIndexOf(' ');
    out[line.slice(name.length, cut)] = Number(line.slice(cut + 1));
  }
  return out;
}

describe('component metrics', () => {
  it('a scrape shows every run, gate, saving and second recorded since boot', async () => {
    const m = new GatewayMetrics('test');
    primeComponents(m, REGISTRY);
    recordRequest(
      m,
      enforced([run('dedup', { changed: [1], tokensAfter: 40, gates: { too_small: 2 } }), run('mask', { reverted: true, changed: [3] })]),
      'ok',
      0.01,
    );
    recordRequest(m, enforced([run('dedup', { changed: [2], tokensAfter: 130 })]), 'ok', 0.01);
    let text = await m.registry.metrics();
    expect(series(text, 'cg_component_runs_total')).toMatchObject({
      '{component="dedup",outcome="ran"}': 2,
      '{component="dedup",outcome="mutated"}': 2,
      '{component="dedup",outcome="acted"}': 1,
      '{component="dedup",outcome="reverted"}': 0,
      '{component="mask",outcome="ran"}': 1,
      '{component="mask",outcome="reverted"}': 1,
      '{component="mask",outcome="mutated"}': 0,
    });
    expect(series(text, 'cg_component_gate_declines_total')['{component="dedup",gate="too_small"}']).toBe(2);
    expect(series(text, 'cg_component_saved_tokens_total')).toMatchObject({ '{component="dedup"}': 60, '{component="mask"}': 0 });
    expect(series(text, 'cg_component_duration_seconds_total')).toMatchObject({
      '{component="dedup"}': 0.004,
      '{component="mask"}': 0.002,
    });

    // What accumulates after a scrape is added once to what the counters hold, never twice.
    recordRequest(m, enforced([run('dedup', { gates: { too_small: 1 } })]), 'ok', 0.01);
    await m.registry.metrics();
    text = await m.registry.metrics();
    expect(series(text, 'cg_component_runs_total')['{component="dedup",outcome="ran"}']).toBe(3);
    expect(series(text, 'cg_component_gate_declines_total')['{component="dedup",gate="too_small"}']).toBe(3);
    expect(series(text, 'cg_component_duration_seconds_total')['{component="dedup"}']).toBeCloseTo(0.006, 9);
  });

  it('a single counter read folds the tallies too', async () => {
    const m = new GatewayMetrics('test');
    recordRequest(m, enforced([run('format', { changed: [0], tokensAfter: 90 })]), 'ok', 0.01);
    const runs = await m.componentRuns.get();
    expect(runs.values.find((v) => v.labels.component === 'format' && v.labels.outcome === 'acted')?.value).toBe(1);
    const saved = await m.componentSavedTokens.get();
    expect(saved.values.find((v) => v.labels.component === 'format')?.value).toBe(10);
  });

  it('billed usage: tokens by kind and USD per origin, a kind never billed has no series', async () => {
    const m = new GatewayMetrics('test');
    const usage = new UsageAccounting(m, createPriceTable());
    const answered = (fresh: number, output: number) => {
      const r = emptyReport('openai', 'default');
      r.model = 'gpt-4.1';
      r.usage = { fresh, cacheRead: 0, cacheWrite: 0, output };
      return r;
    };
    usage.record(answered(1000, 10));
    usage.record(answered(500, 5));
    let text = await m.registry.metrics();
    const tokens = series(text, 'cg_usage_tokens_total');
    expect(tokens).toEqual({
      '{tenant="default",dialect="openai",origin="client",kind="fresh"}': 1500,
      '{tenant="default",dialect="openai",origin="client",kind="output"}': 15,
    });
    const billed = Object.values(series(text, 'cg_billed_usd_total'));
    expect(billed).toHaveLength(1);
    expect(billed[0]).toBeGreaterThan(0);
    usage.record(answered(1000, 10));
    await m.registry.metrics();
    text = await m.registry.metrics();
    expect(series(text, 'cg_usage_tokens_total')['{tenant="default",dialect="openai",origin="client",kind="fresh"}']).toBe(2500);
    expect(Object.values(series(text, 'cg_billed_usd_total'))[0]).toBeCloseTo((billed[0] ?? 0) * (5 / 3), 12);
  });
});
