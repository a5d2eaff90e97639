// The chart's alerts: the rule file passes `promtool check rules` and its unit tests (`promtool
// test rules` on synthetic series, test/fixtures/prometheus/alerts.test.yaml); the chart renders
// it verbatim as a PrometheusRule only when prometheusRule.enabled; every alert has its runbook
// entry, and every metric an alert reads is one the gateway exports.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { GatewayMetrics } from '../../../apps/gateway/src/observability/metrics';
import { CHART, ROOT, render } from '../../support/helm';

const RULES = join(CHART, 'rules', 'alerts.yaml');
const TESTS = join(ROOT, 'test', 'fixtures', 'prometheus', 'alerts.test.yaml');
const promtool = (args: string[]) => spawnSync('promtool', args, { encoding: 'utf8' });

interface Rule {
  alert: string;
  expr: string;
}
const groups = (parse(readFileSync(RULES, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> }).groups;
const alerts = groups.flatMap((g) => g.rules);

it('passes promtool check rules and the rule unit tests', () => {
  const check = promtool(['check', 'rules', RULES]);
  expect(check.stdout + check.stderr).toMatch(new RegExp(`SUCCESS: ${alerts.length} rules found`));
  const tests = promtool(['test', 'rules', TESTS]);
  expect(tests.stdout + tests.stderr).toMatch(/SUCCESS/);
  expect(tests.status).toBe(0);
});

it('tests every alert, firing and quiet', () => {
  const tested = parse(readFileSync(TESTS, 'utf8')) as {
    tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
  };
  const cases = tested.tests.flatMap((t) => t.alert_rule_test);
  for (const a of alerts) {
    const mine = cases.filter((c) => c.alertname === a.alert);
    expect([a.alert, mine.some((c) => c.exp_alerts.length > 0), mine.some((c) => c.exp_alerts.length === 0)]).toEqual([
      a.alert,
      true,
      true,
    ]);
  }
});

it('renders the rules as a PrometheusRule only when enabled, with the extra labels', () => {
  expect(render().filter((o) => o.kind === 'PrometheusRule')).toEqual([]);
  const [rule, ...more] = render({ set: ['prometheusRule.enabled=true', 'prometheusRule.additionalLabels.release=kps'] }).filter(
    (o) => o.kind === 'PrometheusRule',
  );
  expect(more).toEqual([]);
  expect(rule?.metadata.labels?.release).toBe('kps');
  expect((rule as unknown as { spec: { groups: unknown } }).spec.groups).toEqual(groups);
});

it('gives every alert a runbook entry and reads only metrics the gateway exports', async () => {
  const runbooks = readFileSync(join(ROOT, 'docs', 'runbooks.md'), 'utf8');
  const exported = new Set((await new GatewayMetrics('test').registry.getMetricsAsJSON()).map((m) => m.name));
  for (const a of alerts) {
    expect([a.alert, runbooks.includes(`\n## ${a.alert}\n`)]).toEqual([a.alert, true]);
    for (const name of a.expr.match(/\bcg_[a-z_]+/g) ?? []) expect([a.alert, name, exported.has(name)]).toEqual([a.alert, name, true]);
  }
});
