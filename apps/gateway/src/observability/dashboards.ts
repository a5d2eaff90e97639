// The Grafana dashboards, as typed sources: `npm run dashboards` writes them to
// charts/context-guru/dashboards/*.json (a test checks the committed JSON equals this output, and
// that every metric a panel names is exported and every exported family is charted or listed in
// UNCHARTED). Datasource and tenant are template variables; no datasource id is hard-coded.
import type { Dashboard, Panel } from '@grafana/schema';

const DS = { type: 'prometheus', uid: '${datasource}' };
const T = 'tenant=~"$tenant"';

interface Query {
  expr: string;
  legend: string;
}

/** Families deliberately left off the dashboards (say why in docs/observability.md). */
export const UNCHARTED: readonly string[] = ['cg_build_info', 'cg_sse_expand_after_stream_total'];
/** Process metrics from prom-client's default collectors: only memory and CPU are charted. */
export const UNCHARTED_PREFIX = 'cg_process_';

function panel(id: number, title: string, queries: Query[], unit: string, x: number, y: number, w = 12, h = 8, description = ''): Panel {
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
      expr: q.expr,
      legendFormat: q.legend,
      range: true,
    })),
  };
}

function dashboard(uid: string, title: string, description: string, panels: Panel[]): Dashboard {
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
        {
          name: 'tenant',
          label: 'Tenant',
          type: 'query',
          datasource: DS,
          query: { query: 'label_values(cg_requests_total, tenant)', refId: 'tenants' },
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

const rate = (m: string, sel = T) => `rate(${m}{${sel}}[$__rate_interval])`;
const inc = (m: string, sel = T) => `increase(${m}{${sel}}[$__range])`;
const q = (expr: string, legend: string): Query => ({ expr, legend });
/** One arm's billed USD per client input token over the dashboard's range. */
const perMtok = (arm: string) =>
  `sum(${inc('cg_holdout_billed_usd_total', `${T},arm="${arm}"`)}) / sum(${inc('cg_holdout_input_tokens_total', `${T},arm="${arm}"`)})`;
const quantiles = (m: string, by: string) =>
  [0.5, 0.95, 0.99].map((p) =>
    q(`histogram_quantile(${p}, sum by (le, ${by}) (rate(${m}_bucket[$__rate_interval])))`, `p${p * 100} {{${by}}}`),
  );

/** 1 - after/before for one side of the shadow comparison, per tenant. */
const shadowShare = (side: 'active' | 'candidate') =>
  `1 - sum by (tenant) (${rate('cg_shadow_tokens_total', `${T},side="${side}"`)}) / sum by (tenant) (${rate('cg_shadow_tokens_total', `${T},side="before"`)})`;

export const SAVINGS = dashboard(
  'cg-savings',
  'context-guru / Savings',
  'Tokens and money saved, by tenant, preset and component; the bill with the gateway beside the estimate without it.',
  [
    panel(
      1,
      'Tokens saved: cumulative vs unique',
      [
        q(`sum by (tenant) (${inc('cg_saved_tokens_total')})`, 'cumulative {{tenant}}'),
        q(`sum by (tenant) (${inc('cg_saved_unique_tokens_total')})`, 'unique {{tenant}}'),
      ],
      'short',
      0,
      0,
      12,
      8,
      'Cumulative counts a replayed decision every turn (what the provider did not bill); unique counts each original once.',
    ),
    panel(
      2,
      'Money saved (USD): gross, overhead, net',
      [
        q(`sum(${inc('cg_saved_usd_total')})`, 'gross'),
        q(`sum(${inc('cg_billed_usd_total', `${T},origin!="client"`)})`, 'overhead (expand rounds + model calls)'),
        q(
          `(sum(${inc('cg_saved_usd_total')}) or vector(0)) - (sum(${inc('cg_billed_usd_total', `${T},origin!="client"`)}) or vector(0))`,
          'net',
        ),
      ],
      'currencyUSD',
      12,
      0,
    ),
    panel(
      3,
      'Bill with the gateway vs estimated without (USD)',
      [
        q(`sum(${inc('cg_billed_usd_total')})`, 'with'),
        q(
          `sum(${inc('cg_billed_usd_total', `${T},origin="client"`)}) + (sum(${inc('cg_saved_usd_total')}) or vector(0))`,
          'without (estimate)',
        ),
      ],
      'currencyUSD',
      0,
      8,
    ),
    panel(
      4,
      'Saved tokens by preset and position',
      [q(`sum by (preset, where) (${rate('cg_saved_tokens_total')})`, '{{preset}} {{where}}')],
      'short',
      12,
      8,
    ),
    panel(
      5,
      'Saved tokens by component (cumulative)',
      [q(`sum by (component) (rate(cg_component_saved_tokens_total[$__rate_interval]))`, '{{component}}')],
      'short',
      0,
      16,
    ),
    panel(
      6,
      'Provider usage by kind: cache read vs write vs fresh',
      [q(`sum by (kind, origin) (${rate('cg_usage_tokens_total')})`, '{{origin}} {{kind}}')],
      'short',
      12,
      16,
    ),
    panel(
      7,
      'Billed cost by model family (USD/s)',
      [q(`sum by (family, origin) (${rate('cg_billed_usd_total')})`, '{{family}} {{origin}}')],
      'currencyUSD',
      0,
      24,
    ),
    panel(
      8,
      'Content tokens before vs after the pipeline',
      [q(`sum by (stage) (${rate('cg_tokens_total')})`, '{{stage}}')],
      'short',
      12,
      24,
    ),
    panel(
      9,
      'Shadow: share of tokens removed, candidate vs active (same requests)',
      [q(shadowShare('active'), 'active {{tenant}}'), q(shadowShare('candidate'), 'candidate {{tenant}}')],
      'percentunit',
      0,
      32,
      12,
      8,
      'On the sampled requests the candidate config version was evaluated on, off the hot path: the share of content tokens each pipeline removed. GET /v1/tenants/{id}/shadow has the figures summed over replicas.',
    ),
    panel(
      10,
      'Shadow: requests sampled, evaluated and dropped',
      [
        q(`sum by (tenant) (${rate('cg_shadow_sampled_total')})`, 'sampled {{tenant}}'),
        q(`sum by (tenant) (${rate('cg_shadow_evaluated_total')})`, 'evaluated {{tenant}}'),
        q(`sum by (tenant, reason) (${rate('cg_shadow_dropped_total')})`, 'dropped {{reason}} {{tenant}}'),
      ],
      'reqps',
      12,
      32,
      12,
      8,
      'Drops are sampled requests the gateway was too busy for (queue_full, busy), too large, too slow (timeout) or that failed.',
    ),
    panel(
      11,
      'Shadow: components that acted, candidate vs active',
      [q(`sum by (component, side) (${rate('cg_shadow_component_acted_total')})`, '{{side}} {{component}}')],
      'reqps',
      0,
      40,
    ),
    panel(
      12,
      'Shadow: candidate version vs active version',
      [
        q(`max by (tenant) (cg_shadow_candidate_version{${T}})`, 'candidate {{tenant}}'),
        q(`max by (tenant) (cg_config_version{${T}}) and on (tenant) cg_shadow_candidate_version`, 'active {{tenant}}'),
      ],
      'none',
      12,
      40,
    ),
    panel(
      13,
      'Measured saving against the holdout (treated vs holdout, 95 % interval)',
      [
        q(`max by (tenant, bound) (cg_holdout_saving_ratio{${T}})`, '{{tenant}} {{bound}} (active version, all its sessions)'),
        q(`1 - (${perMtok('treated')}) / (${perMtok('holdout')})`, 'this range (point estimate)'),
      ],
      'percentunit',
      0,
      48,
      12,
      8,
      'Billed USD per input token the client sent, treated sessions against holdout sessions (forwarded untouched). estimate/low/high: the 95 % bootstrap interval over the sessions of the active config version, from the figures every replica shares; no line while there are too few sessions. See docs/holdout.md.',
    ),
    panel(
      14,
      'Billed USD per million client input tokens, by arm',
      [q(`sum by (arm) (${inc('cg_holdout_billed_usd_total')}) / sum by (arm) (${inc('cg_holdout_input_tokens_total')}) * 1e6`, '{{arm}}')],
      'currencyUSD',
      12,
      48,
    ),
    panel(
      15,
      'Holdout sessions measured and requests, by arm',
      [
        q(`max by (tenant, arm) (cg_holdout_sessions{${T}})`, 'sessions {{tenant}} {{arm}}'),
        q(`sum by (arm) (${inc('cg_holdout_requests_total')})`, 'requests {{arm}}'),
      ],
      'short',
      0,
      56,
    ),
  ],
);

export const COMPONENTS = dashboard(
  'cg-components',
  'context-guru / Components and gates',
  'What each component did, why it declined, what it cost in time, and what was reverted or failed open.',
  [
    panel(
      1,
      'Component runs by outcome',
      [q('sum by (component, outcome) (rate(cg_component_runs_total[$__rate_interval]))', '{{component}} {{outcome}}')],
      'ops',
      0,
      0,
    ),
    panel(
      2,
      'Declines by gate',
      [q('sum by (component, gate) (rate(cg_component_gate_declines_total[$__rate_interval])) > 0', '{{component}} {{gate}}')],
      'ops',
      12,
      0,
    ),
    panel(
      3,
      'Time per component (s/s)',
      [q('sum by (component) (rate(cg_component_duration_seconds_total[$__rate_interval]))', '{{component}}')],
      's',
      0,
      8,
    ),
    panel(
      4,
      'Reverts and cache-guard reverts',
      [
        q('sum by (component) (rate(cg_component_runs_total{outcome="reverted"}[$__rate_interval]))', 'reverted {{component}}'),
        q('sum(rate(cg_cache_guard_reverts_total[$__rate_interval]))', 'cache guard'),
      ],
      'ops',
      12,
      8,
    ),
    panel(5, 'Fail-open reasons', [q('sum by (reason) (rate(cg_fail_open_total[$__rate_interval]))', '{{reason}}')], 'ops', 0, 16),
    panel(
      6,
      'Compaction-model calls, tokens and failures',
      [
        q('sum by (component) (delta(cg_llm_calls[$__rate_interval]))', 'calls {{component}}'),
        q('sum by (component, direction) (delta(cg_llm_tokens[$__rate_interval]))', 'tokens {{component}} {{direction}}'),
        q('sum by (component, kind) (delta(cg_llm_failures[$__rate_interval]))', 'failures {{component}} {{kind}}'),
      ],
      'short',
      12,
      16,
    ),
  ],
);

export const HEALTH = dashboard(
  'cg-health',
  'context-guru / Gateway health',
  'Traffic, latency the gateway adds, upstream status, the expand loop, stash and freeze health, stores and the process.',
  [
    panel(
      1,
      'Requests per second by route and outcome',
      [q(`sum by (route, outcome) (${rate('cg_requests_total')})`, '{{route}} {{outcome}}')],
      'reqps',
      0,
      0,
    ),
    panel(2, 'Total latency', quantiles('cg_request_duration_seconds', 'route'), 's', 12, 0),
    panel(3, 'Added latency (gateway work before forwarding)', quantiles('cg_added_latency_seconds', 'route'), 's', 0, 8),
    panel(4, 'Upstream latency (to headers)', quantiles('cg_upstream_duration_seconds', 'dialect'), 's', 12, 8),
    panel(
      5,
      'Upstream status classes',
      [q('sum by (dialect, status) (rate(cg_upstream_responses_total[$__rate_interval]))', '{{dialect}} {{status}}')],
      'ops',
      0,
      16,
    ),
    panel(
      6,
      'Expand rounds and bounces',
      [
        q('sum(rate(cg_expand_rounds_total[$__rate_interval]))', 'rounds'),
        q('sum(rate(cg_expand_bounces_total[$__rate_interval]))', 'bounces'),
      ],
      'ops',
      12,
      16,
    ),
    panel(
      7,
      'Stash hit rate',
      [
        q(
          'sum(rate(cg_stash_lookups_total{result="hit"}[$__rate_interval])) / sum(rate(cg_stash_lookups_total[$__rate_interval]))',
          'hit rate',
        ),
      ],
      'percentunit',
      0,
      24,
    ),
    panel(
      8,
      'Frozen decisions replayed, lost and repaired',
      [
        q('sum by (outcome) (rate(cg_frozen_decisions_total[$__rate_interval]))', 'replay {{outcome}}'),
        q('sum by (outcome) (cg_frozen_store_events)', 'store {{outcome}}'),
      ],
      'short',
      12,
      24,
    ),
    panel(
      9,
      'Streams by path, and requests shed (served without new compression work)',
      [
        q('sum by (path) (rate(cg_sse_streams_total[$__rate_interval]))', '{{path}}'),
        q('sum(rate(cg_shed_total[$__rate_interval]))', 'shed'),
      ],
      'ops',
      0,
      32,
    ),
    panel(
      10,
      'Hot store up, process memory and CPU',
      [
        q('min(cg_store_up)', 'store up'),
        q('sum by (instance) (cg_process_process_resident_memory_bytes) / 1e9', 'RSS GB {{instance}}'),
        q('sum by (instance) (rate(cg_process_process_cpu_seconds_total[$__rate_interval]))', 'CPU {{instance}}'),
      ],
      'short',
      12,
      32,
    ),
  ],
);

export const CONTROL = dashboard(
  'cg-control-plane',
  'context-guru / Control plane',
  'Which generation each replica applied, how long a change took to arrive, and the config version each tenant serves.',
  [
    panel(1, 'Control generation per replica', [q('max by (instance) (cg_control_generation)', '{{instance}}')], 'none', 0, 0),
    panel(2, 'Propagation time (commit → applied)', quantiles('cg_control_propagation_seconds', 'instance'), 's', 12, 0),
    panel(
      3,
      'Config version per tenant and replica',
      [q(`max by (tenant, instance) (cg_config_version{${T}})`, '{{tenant}} {{instance}}')],
      'none',
      0,
      8,
    ),
    panel(
      4,
      'Requests refused or failed by outcome',
      [q(`sum by (outcome) (${rate('cg_requests_total', `${T},outcome!="ok"`)})`, '{{outcome}}')],
      'reqps',
      12,
      8,
    ),
    panel(
      5,
      'Tenant key revocations applied per replica',
      [q(`sum by (tenant, instance) (${inc('cg_tenant_key_revocations_total')})`, '{{tenant}} {{instance}}')],
      'short',
      0,
      16,
      12,
      8,
      'Keys each replica stopped accepting (revoked, or their tenant disabled) in the range: every replica should show the same count.',
    ),
  ],
);

export const DASHBOARDS: Record<string, Dashboard> = { savings: SAVINGS, components: COMPONENTS, health: HEALTH, 'control-plane': CONTROL };

/** Every query expression of a dashboard. */
export function expressions(d: Dashboard): string[] {
  return (d.panels ?? []).flatMap((p) => ((p as Panel).targets ?? []).map((t) => String((t as { expr?: unknown }).expr)));
}

export function renderDashboard(d: Dashboard): string {
  return `${JSON.stringify(d, null, 2)}\n`;
}
