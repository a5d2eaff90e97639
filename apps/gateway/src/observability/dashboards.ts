// The Grafana dashboards, as typed sources: `npm run dashboards` writes them to
// charts/context-guru/dashboards/*.json (a test checks the committed JSON equals this output, and
// that every metric a panel names is exported and every exported family is charted or listed in
// UNCHARTED). The savings and components dashboards live here, the operators' two in
// dashboards-ops.ts, the panel and frame builders in dashboard-builder.ts.
import type { Dashboard, Panel } from '@grafana/schema';
import { T, dashboard, inc, panel, q, rate } from './dashboard-builder';
import { CONTROL, HEALTH } from './dashboards-ops';

/** Families deliberately left off the dashboards (say why in docs/observability.md). */
export const UNCHARTED: readonly string[] = ['cg_build_info', 'cg_sse_expand_after_stream_total'];
/** Process metrics from prom-client's default collectors: only memory and CPU are charted. */
export const UNCHARTED_PREFIX = 'cg_process_';

/** One arm's billed USD per client input token over the dashboard's range. */
const perMtok = (arm: string) =>
  `sum(${inc('cg_holdout_billed_usd_total', `${T},arm="${arm}"`)}) / sum(${inc('cg_holdout_input_tokens_total', `${T},arm="${arm}"`)})`;

/** 1 - after/before for one side of the shadow comparison, per tenant. */
const shadowShare = (side: 'active' | 'candidate') =>
  `1 - sum by (tenant) (${rate('cg_shadow_tokens_total', `${T},side="${side}"`)}) / sum by (tenant) (${rate('cg_shadow_tokens_total', `${T},side="before"`)})`;

const SAVINGS = dashboard(
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

const COMPONENTS = dashboard(
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
      'Reverts, cache-guard reverts and planned rewrites',
      [
        q('sum by (component) (rate(cg_component_runs_total{outcome="reverted"}[$__rate_interval]))', 'reverted {{component}}'),
        q('sum(rate(cg_cache_guard_reverts_total[$__rate_interval]))', 'cache guard'),
        q('sum(rate(cg_planned_rewrites_total[$__rate_interval]))', 'planned rewrites'),
        q('sum by (kind) (rate(cg_planned_rewrite_tokens_total[$__rate_interval]))', 'planned rewrite tokens {{kind}}'),
        q('sum by (kind) (rate(cg_planned_rewrite_usd_total[$__rate_interval]))', 'planned rewrite usd {{kind}}'),
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

export const DASHBOARDS: Record<string, Dashboard> = { savings: SAVINGS, components: COMPONENTS, health: HEALTH, 'control-plane': CONTROL };

/** Every query expression of a dashboard. */
export function expressions(d: Dashboard): string[] {
  return (d.panels ?? []).flatMap((p) => ((p as Panel).targets ?? []).map((t) => String((t as { expr?: unknown }).expr)));
}

export function renderDashboard(d: Dashboard): string {
  return `${JSON.stringify(d, null, 2)}\n`;
}
