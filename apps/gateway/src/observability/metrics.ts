// Every Prometheus metric the gateway exports, defined in one place. Base units (seconds, tokens),
// `cg_` prefix, and only bounded label values: component and gate names come from the registry,
// never from callers, and no session id is ever a label (the priced-rewrite families are built in
// planned-metrics.ts). What each event adds to them is metrics-record.ts.
import { plannedRewriteMetrics } from './planned-metrics';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TenantLabels } from './tenant-label';
import { ComponentTallies } from './component-tally';
import { UsageTallies } from './usage-tally';
import { StoreMetrics } from './store-metrics';

/** prom-client default gauges that are only sum(by-type gauge) under a counter's suffix. */
const REDUNDANT_TOTAL_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

const LATENCY_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export class GatewayMetrics {
  readonly registry = new Registry();
  /** Postgres reachability, the write-behind queue, retention purges (store-metrics.ts). */
  readonly stores = new StoreMetrics(this.registry);
  /** Per-component figures of finished requests, added to the four component counters when read. */
  readonly componentTallies = new ComponentTallies();
  private readonly foldComponents = (): void => this.componentTallies.fold(this);
  /** Provider-billed usage of finished requests, added to cg_usage_tokens_total and cg_billed_usd_total when read. */
  readonly usageTallies = new UsageTallies();
  private readonly foldUsage = (): void => this.usageTallies.fold(this);
  readonly requests = new Counter({
    name: 'cg_requests_total',
    help: 'Requests handled, by route, outcome and tenant (bounded: overflow tenants are "other").',
    labelNames: ['route', 'outcome', 'tenant'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'cg_request_duration_seconds',
    help: 'Whole request latency as seen by the client, by route.',
    labelNames: ['route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly addedLatency = new Histogram({
    name: 'cg_added_latency_seconds',
    help: 'Time the gateway itself added before forwarding (decode, pipeline, stash, encode).',
    labelNames: ['route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly upstreamDuration = new Histogram({
    name: 'cg_upstream_duration_seconds',
    help: 'Upstream time to response headers, by dialect.',
    labelNames: ['dialect'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly upstreamResponses = new Counter({
    name: 'cg_upstream_responses_total',
    help: 'Upstream responses by dialect and status class (or transport error).',
    labelNames: ['dialect', 'status'] as const,
    registers: [this.registry],
  });
  readonly tokens = new Counter({
    name: 'cg_tokens_total',
    help: 'Content tokens of enforced requests before and after the pipeline, by tenant.',
    labelNames: ['stage', 'tenant'] as const,
    registers: [this.registry],
  });
  readonly componentRuns = new Counter({
    name: 'cg_component_runs_total',
    help: 'Component runs by outcome (ran ⊇ mutated ⊇ acted; reverted separately).',
    labelNames: ['component', 'outcome'] as const,
    collect: this.foldComponents,
    registers: [this.registry],
  });
  readonly componentGateDeclines = new Counter({
    name: 'cg_component_gate_declines_total',
    help: 'Messages a component passed over, by the gate that declined them.',
    labelNames: ['component', 'gate'] as const,
    collect: this.foldComponents,
    registers: [this.registry],
  });
  readonly componentSavedTokens = new Counter({
    name: 'cg_component_saved_tokens_total',
    help: 'Content tokens a component removed (cumulative; replays count every turn).',
    labelNames: ['component'] as const,
    collect: this.foldComponents,
    registers: [this.registry],
  });
  readonly componentDuration = new Counter({
    name: 'cg_component_duration_seconds_total',
    help: 'Time spent inside each component.',
    labelNames: ['component'] as const,
    collect: this.foldComponents,
    registers: [this.registry],
  });
  readonly expandRounds = new Counter({
    name: 'cg_expand_rounds_total',
    help: 'Continuation rounds made to resolve context_guru_expand calls.',
    registers: [this.registry],
  });
  readonly expandBounces = new Counter({
    name: 'cg_expand_bounces_total',
    help: 'Originals handed back to the model through the expand tool.',
    registers: [this.registry],
  });
  readonly stashLookups = new Counter({
    name: 'cg_stash_lookups_total',
    help: 'Stash lookups by result.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly frozenDecisions = new Counter({
    name: 'cg_frozen_decisions_total',
    help: 'Frozen-decision replays by outcome.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly sseStreams = new Counter({
    name: 'cg_sse_streams_total',
    help: 'Streaming responses by path (streamed through or buffered for an expand).',
    labelNames: ['path'] as const,
    registers: [this.registry],
  });
  readonly sseExpandAfterStream = new Counter({
    name: 'cg_sse_expand_after_stream_total',
    help: 'Streams passed through that mentioned context_guru_expand after their first block (the client saw the call).',
    registers: [this.registry],
  });
  readonly cacheGuardReverts = new Counter({
    name: 'cg_cache_guard_reverts_total',
    help: 'Changes inside the provider-cached prefix reverted by the cache guard.',
    registers: [this.registry],
  });
  readonly planned = plannedRewriteMetrics(this.registry);
  readonly frozenStore = new Gauge({
    name: 'cg_frozen_store_events',
    help: 'Frozen decisions this process saw lost (dropped) and written again (repaired); flips = dropped - repaired.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly llmCalls = new Gauge({
    name: 'cg_llm_calls',
    help: 'Calls the gateway made to compaction models since start (monotonic; rate() it as a counter).',
    labelNames: ['component'] as const,
    registers: [this.registry],
  });
  readonly llmTokens = new Gauge({
    name: 'cg_llm_tokens',
    help: 'Tokens the gateway spent on compaction models since start, by direction (monotonic).',
    labelNames: ['component', 'direction'] as const,
    registers: [this.registry],
  });
  readonly llmFailures = new Gauge({
    name: 'cg_llm_failures',
    help: 'Compaction-model calls that timed out, failed or were truncated since start (monotonic).',
    labelNames: ['component', 'kind'] as const,
    registers: [this.registry],
  });
  readonly shed = new Counter({
    name: 'cg_shed_total',
    help: 'Requests served without new compression work because the compression gate was full when they arrived (earlier turns still replayed byte-identically).',
    registers: [this.registry],
  });
  readonly failOpen = new Counter({
    name: 'cg_fail_open_total',
    help: 'Requests forwarded pristine because an internal step failed.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly configVersion = new Gauge({
    name: 'cg_config_version',
    help: 'Pipeline config version each tenant runtime serves.',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });
  readonly controlGeneration = new Gauge({
    name: 'cg_control_generation',
    help: 'Control-plane generation this replica has applied.',
    registers: [this.registry],
  });
  readonly keyRevocations = new Counter({
    name: 'cg_tenant_key_revocations_total',
    help: 'Tenant keys this replica stopped accepting after a control-plane change (revoked, or their tenant disabled).',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });
  readonly controlPropagation = new Histogram({
    name: 'cg_control_propagation_seconds',
    help: 'Time from a control-plane change committing to this replica applying it.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });
  readonly storeUp = new Gauge({
    name: 'cg_store_up',
    help: '1 when the hot store answered its last health probe.',
    registers: [this.registry],
  });
  // Usage and money (observability/usage-accounting.ts). origin: client = answers the client got,
  // expand = answers the expand loop consumed to continue, model = compaction-model calls.
  readonly usageTokens = new Counter({
    name: 'cg_usage_tokens_total',
    help: 'Tokens the provider reported billing, by origin (client, expand, model) and kind (fresh, cache_read, cache_write, output).',
    labelNames: ['tenant', 'dialect', 'origin', 'kind'] as const,
    collect: this.foldUsage,
    registers: [this.registry],
  });
  readonly billedUsd = new Counter({
    name: 'cg_billed_usd_total',
    help: 'USD the provider billed for the reported usage at the price table rates, by origin and model family.',
    labelNames: ['tenant', 'dialect', 'origin', 'family'] as const,
    collect: this.foldUsage,
    registers: [this.registry],
  });
  readonly savedTokens = new Counter({
    name: 'cg_saved_tokens_total',
    help: 'Content tokens removed from forwarded prompts, every turn counted (cumulative), by where they sat: prefix (provider-cached) or tail.',
    labelNames: ['tenant', 'preset', 'dialect', 'where'] as const,
    registers: [this.registry],
  });
  readonly savedUniqueTokens = new Counter({
    name: 'cg_saved_unique_tokens_total',
    help: 'Content tokens removed, each stashed original counted once however often its decision replays.',
    labelNames: ['tenant', 'preset', 'dialect'] as const,
    registers: [this.registry],
  });
  readonly savedUsd = new Counter({
    name: 'cg_saved_usd_total',
    help: 'Gross USD value of the removed tokens at the rate the provider would have billed them that turn (prefix: cache read, tail: cache write or fresh); subtract cg_billed_usd_total{origin!="client"} for the net.',
    labelNames: ['tenant', 'preset', 'dialect', 'where'] as const,
    registers: [this.registry],
  });
  // Shadow evaluation (apps/gateway/src/shadow): a candidate config version run off the hot path on
  // a sample of requests. Versions are not labels (unbounded); cg_shadow_candidate_version names it.
  readonly shadowSampled = new Counter({
    name: 'cg_shadow_sampled_total',
    help: 'Requests picked for shadow evaluation of the tenant candidate config (evaluated + dropped).',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });
  readonly shadowEvaluated = new Counter({
    name: 'cg_shadow_evaluated_total',
    help: 'Sampled requests the candidate pipeline ran on, off the hot path.',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });
  readonly shadowDropped = new Counter({
    name: 'cg_shadow_dropped_total',
    help: 'Sampled requests not evaluated, by reason (queue_full, busy, too_large, timeout, failed).',
    labelNames: ['tenant', 'reason'] as const,
    registers: [this.registry],
  });
  readonly shadowTokens = new Counter({
    name: 'cg_shadow_tokens_total',
    help: 'Content tokens of shadow-evaluated requests: before, after the active pipeline, after the candidate (same requests).',
    labelNames: ['tenant', 'side'] as const,
    registers: [this.registry],
  });
  readonly shadowActed = new Counter({
    name: 'cg_shadow_component_acted_total',
    help: 'Shadow-evaluated requests on which a component removed tokens, in the active or the candidate pipeline.',
    labelNames: ['tenant', 'component', 'side'] as const,
    registers: [this.registry],
  });
  readonly shadowCandidateVersion = new Gauge({
    name: 'cg_shadow_candidate_version',
    help: 'The config version each tenant evaluates in shadow (its active version is cg_config_version).',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });
  // Measured savings (holdout/): tenants running a holdout, by the session's arm — treated, or
  // holdout (forwarded untouched for its whole life). The compared figure is billed USD per input
  // token the client sent; the saving gauges come from the figures every replica shares.
  readonly holdoutRequests = new Counter({
    name: 'cg_holdout_requests_total',
    help: "Requests of tenants running a holdout, by the session's arm (treated | holdout).",
    labelNames: ['tenant', 'arm'] as const,
    registers: [this.registry],
  });
  readonly holdoutBilledUsd = new Counter({
    name: 'cg_holdout_billed_usd_total',
    help: 'USD the provider billed for measured turns (client answer, expand rounds and model calls), by arm.',
    labelNames: ['tenant', 'arm'] as const,
    registers: [this.registry],
  });
  readonly holdoutInputTokens = new Counter({
    name: 'cg_holdout_input_tokens_total',
    help: 'Content tokens the client sent on measured turns, by arm (what billed USD is compared per).',
    labelNames: ['tenant', 'arm'] as const,
    registers: [this.registry],
  });
  readonly holdoutSessions = new Gauge({
    name: 'cg_holdout_sessions',
    help: "Sessions measured on the tenant's active config version, by arm, over every replica (set at scrape).",
    labelNames: ['tenant', 'arm'] as const,
    registers: [this.registry],
  });
  readonly holdoutSaving = new Gauge({
    name: 'cg_holdout_saving_ratio',
    help: 'Measured saving of the active config version, 1 - treated/holdout USD per client input token: bound="estimate", "low" and "high" (95 % interval), over every replica (set at scrape; absent while too few sessions).',
    labelNames: ['tenant', 'bound'] as const,
    registers: [this.registry],
  });
  readonly buildInfo = new Gauge({
    name: 'cg_build_info',
    help: 'Build information.',
    labelNames: ['version'] as const,
    registers: [this.registry],
  });

  /** Bounds the `tenant` label (TENANT_LABEL_CAP distinct values, the rest are `other`). */
  readonly tenants: TenantLabels;

  constructor(version: string, tenantLabelCap?: number) {
    this.tenants = new TenantLabels(tenantLabelCap);
    collectDefaultMetrics({ register: this.registry, prefix: 'cg_process_' });
    // prom-client also exports the sums of three by-type gauges as gauges named *_total, which
    // `promtool check metrics` rejects (the suffix is a counter's) and scrapers treat as counters.
    // The by-type families stay; their sum() is exactly the total, so no figure is lost.
    for (const family of REDUNDANT_TOTAL_GAUGES) this.registry.removeSingleMetric(`cg_process_${family}`);
    this.buildInfo.set({ version }, 1);
  }
}
