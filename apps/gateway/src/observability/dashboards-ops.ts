// The operators' dashboards: gateway health (traffic, added latency, upstream, expand loop, stores,
// process) and the control plane (generations, propagation, config versions, key revocations).
import { T, dashboard, inc, panel, q, quantiles, rate } from './dashboard-builder';

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
    panel(
      11,
      'Durable store: Postgres up, write-behind queue and drops, retention purges',
      [
        q('min(cg_postgres_up)', 'postgres up'),
        q('sum by (kind) (cg_write_behind_pending)', 'queued {{kind}}'),
        q('sum(cg_write_behind_pending_bytes) / 1e6', 'queued MB'),
        q('sum by (kind) (rate(cg_write_behind_dropped_total[$__rate_interval]))', 'dropped {{kind}}'),
        q('sum(rate(cg_write_behind_refused_total[$__rate_interval]))', 'originals refused'),
        q('sum(rate(cg_write_behind_flush_failures_total[$__rate_interval]))', 'failed flushes'),
        q('sum by (outcome) (increase(cg_retention_purge_total[1h]))', 'purges {{outcome}}'),
        q('sum by (table) (increase(cg_retention_purged_rows_total[1h]))', 'purged {{table}}'),
      ],
      'short',
      0,
      40,
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
