// The committed dashboards are the generated ones, and dashboards and metrics do not drift apart:
// every metric a panel names is exported, every exported family is charted or deliberately listed.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DASHBOARDS, UNCHARTED, UNCHARTED_PREFIX, expressions, renderDashboard } from '../../../apps/gateway/src/observability/dashboards';
import { GatewayMetrics } from '../../../apps/gateway/src/observability/metrics';

const DIR = join(__dirname, '..', '..', '..', 'charts', 'context-guru', 'dashboards');
const exported = new Set(new GatewayMetrics('test').registry.getMetricsAsArray().map((m) => m.name));
const referenced = new Set(
  Object.values(DASHBOARDS)
    .flatMap(expressions)
    .flatMap((e) => e.match(/\bcg_[a-z0-9_]+/g) ?? [])
    .map((n) => n.replace(/_(bucket|sum|count)$/, '')),
);

describe('dashboards', () => {
  it('the committed JSON is what `npm run dashboards` generates, one file per dashboard', () => {
    expect(
      readdirSync(DIR)
        .filter((f) => f.endsWith('.json'))
        .sort(),
    ).toEqual(
      Object.keys(DASHBOARDS)
        .map((n) => `${n}.json`)
        .sort(),
    );
    for (const [name, d] of Object.entries(DASHBOARDS)) expect(readFileSync(join(DIR, `${name}.json`), 'utf8')).toBe(renderDashboard(d));
  });

  it('every metric a panel names is exported by the gateway', () => {
    expect([...referenced].filter((n) => !exported.has(n))).toEqual([]);
  });

  it('every exported family is on a dashboard or in the documented allowlist', () => {
    const uncharted = [...exported].filter((n) => !referenced.has(n) && !n.startsWith(UNCHARTED_PREFIX) && !UNCHARTED.includes(n));
    expect(uncharted).toEqual([]);
    const docs = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'observability.md'), 'utf8');
    for (const n of UNCHARTED) expect(docs).toContain(n);
  });

  it('scopes every metric of every panel to the chosen namespace and job (two releases never add up)', () => {
    for (const e of Object.values(DASHBOARDS).flatMap(expressions))
      for (const m of e.matchAll(/\bcg_[a-z0-9_]+(\{)?/g))
        expect({ e, at: e.slice(m.index, m.index + m[0].length + 36) }).toEqual({
          e,
          at: expect.stringMatching(/\{namespace=~"\$namespace",job=~"\$job"/),
        });
  });

  it('has datasource, namespace, job and tenant variables, and no hard-coded datasource id', () => {
    for (const d of Object.values(DASHBOARDS)) {
      expect(d.templating?.list?.map((v) => v.name)).toEqual(['datasource', 'namespace', 'job', 'tenant']);
      const text = renderDashboard(d);
      for (const m of text.matchAll(/"uid": "([^"]*)"/g)) expect([d.uid, '${datasource}']).toContain(m[1]);
    }
  });

  it('documents every exported metric family', () => {
    const docs = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'observability.md'), 'utf8');
    expect([...exported].filter((n) => !n.startsWith(UNCHARTED_PREFIX) && !docs.includes(`\`${n}\``))).toEqual([]);
  });
});
