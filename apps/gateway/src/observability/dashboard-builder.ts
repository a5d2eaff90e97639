// The pieces every dashboard is built from: a timeseries panel, the dashboard frame with its
// datasource, namespace, job and tenant template variables (no datasource id is hard-coded), and
// PromQL helpers that apply the tenant selector. Every metric a panel names is scoped to the
// chosen namespace and job (scoped()), so two releases scraped by one Prometheus — or shown in one
// Grafana — never add up on each other's panels; the chart gives each release its own uids.
import type { Dashboard, Panel } from '@grafana/schema';

const DS = { type: 'prometheus', uid: '${datasource}' };
export const T = 'tenant=~"$tenant"';
/** The release a dashboard shows: its Prometheus namespace and job labels. */
const RELEASE = 'namespace=~"$namespace",job=~"$job"';

/** `expr` with every cg_ metric selector narrowed to RELEASE (merged into a selector it has). */
function scoped(expr: string): string {
  return expr.replace(/\b(cg_[a-z0-9_]+)(\{([^}]*)\})?/g, (_m, name: string, _sel, inner: string | undefined) =>
    inner ? `${name}{${RELEASE},${inner}}` : `${name}{${RELEASE}}`,
  );
}

interface Query {
  expr: string;
  legend: string;
}

export function panel(
  id: number,
  title: string,
  queries: Query[],
  unit: string,
  x: number,
  y: number,
  w = 12,
  h = 8,
  description = '',
): Panel {
  return {
    id,
    type: 'timeseries',
    title,
    description,
    datasource: DS,
    gridPos: { x, y, w, h },
    fieldConfig: { defaults: { unit }, overrides: [] },
    options: { legend: { displayMode: 'table', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } },
    targets: queries.map((q, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DS,
      expr: scoped(q.expr),
      legendFormat: q.legend,
      range: true,
    })),
  };
}

/** A multi-value query variable over one label, All by default. */
function variable(name: string, label: string, query: string) {
  return {
    name,
    label,
    type: 'query' as const,
    datasource: DS,
    query: { query, refId: name },
    includeAll: true,
    multi: true,
    allValue: '.*',
    current: { text: 'All', value: '$__all' },
    refresh: 2 as const,
    hide: 0 as const,
  };
}

export function dashboard(uid: string, title: string, description: string, panels: Panel[]): Dashboard {
  return {
    uid,
    title,
    description,
    tags: ['context-guru'],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: { text: 'Prometheus', value: 'prometheus' },
          hide: 0,
        },
        variable('namespace', 'Namespace', 'label_values(cg_build_info, namespace)'),
        variable('job', 'Job', 'label_values(cg_build_info{namespace=~"$namespace"}, job)'),
        {
          name: 'tenant',
          label: 'Tenant',
          type: 'query',
          datasource: DS,
          query: { query: `label_values(${scoped('cg_requests_total')}, tenant)`, refId: 'tenants' },
          includeAll: true,
          multi: true,
          allValue: '.*',
          current: { text: 'All', value: '$__all' },
          refresh: 2,
          hide: 0,
        },
      ],
    },
    annotations: { list: [] },
    panels,
  };
}

export const rate = (m: string, sel = T) => `rate(${m}{${sel}}[$__rate_interval])`;
export const inc = (m: string, sel = T) => `increase(${m}{${sel}}[$__range])`;
export const q = (expr: string, legend: string): Query => ({ expr, legend });
export const quantiles = (m: string, by: string) =>
  [0.5, 0.95, 0.99].map((p) =>
    q(`histogram_quantile(${p}, sum by (le, ${by}) (rate(${m}_bucket[$__rate_interval])))`, `p${p * 100} {{${by}}}`),
  );
