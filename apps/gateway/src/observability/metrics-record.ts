// What each event adds to the gateway's metrics (metrics.ts defines them): a finished request (its
// outcome and latency, tokens before and after the pipeline, each component's run, the expand,
// stash, freeze and stream counts), an upstream answer, a control-plane generation, key
// revocations, the compaction model's spend at scrape time, and the components primed at boot.
import type { ComponentDefinition } from '@context-guru/components';
import type { GatewayMetrics } from './metrics';
import { type PlannedRewriteReport, type RequestReport } from '@context-guru/engine';
import type { SpendTotals } from '../model/spend-recorder';

export function recordRequest(m: GatewayMetrics, r: RequestReport, outcome: string, totalSeconds: number): void {
  const tenant = m.tenants.label(r.tenant);
  m.requests.inc({ route: r.route, outcome, tenant });
  m.requestDuration.observe({ route: r.route }, totalSeconds);
  m.addedLatency.observe({ route: r.route }, r.addedMs / 1000);
  if (r.failOpen) m.failOpen.inc({ reason: r.failOpen });
  if (r.shed) m.shed.inc();
  if (r.enforced) {
    m.tokens.inc({ stage: 'before', tenant }, r.tokensBefore);
    m.tokens.inc({ stage: 'after', tenant }, r.tokensAfter);
    for (const rep of r.reports) m.componentTallies.add(rep);
  }
  if (r.expandRounds) m.expandRounds.inc(r.expandRounds);
  if (r.bounces) m.expandBounces.inc(r.bounces);
  if (r.stashHits) m.stashLookups.inc({ result: 'hit' }, r.stashHits);
  if (r.stashMisses) m.stashLookups.inc({ result: 'miss' }, r.stashMisses);
  if (r.frozenHits) m.frozenDecisions.inc({ outcome: 'hit' }, r.frozenHits);
  if (r.frozenMisses) m.frozenDecisions.inc({ outcome: 'miss' }, r.frozenMisses);
  if (r.sse) m.sseStreams.inc({ path: r.sse });
  if (r.expandAfterStream) m.sseExpandAfterStream.inc();
  if (r.guardReverted) m.cacheGuardReverts.inc(r.guardReverted);
  if (r.planned) recordPlanned(m, r.planned);
}

/** A counter only goes up: a cut that paid on its own turn (negative cost) counts as saving then. */
function recordPlanned(m: GatewayMetrics, p: PlannedRewriteReport): void {
  m.planned.rewrites.inc();
  m.planned.tokens.inc({ kind: 'cost' }, Math.max(0, p.costTokens));
  m.planned.tokens.inc({ kind: 'saving_per_turn' }, p.savingPerTurn + Math.max(0, -p.costTokens));
  m.planned.usd.inc({ kind: 'cost' }, Math.max(0, p.costUsd));
  m.planned.usd.inc({ kind: 'saving_per_turn' }, p.savingUsdPerTurn + Math.max(0, -p.costUsd));
}

/** Every registered component and gate is exported from boot, at 0, so dashboards never guess. */
export function primeComponents(m: GatewayMetrics, defs: readonly ComponentDefinition[]): void {
  for (const def of defs) {
    for (const outcome of ['ran', 'mutated', 'acted', 'reverted']) m.componentRuns.inc({ component: def.name, outcome }, 0);
    for (const gate of def.gates) m.componentGateDeclines.inc({ component: def.name, gate }, 0);
    m.componentSavedTokens.inc({ component: def.name }, 0);
    m.componentDuration.inc({ component: def.name }, 0);
  }
}

/** Own model spend, copied from the spend recorder at scrape time. */
export function setLlmSpend(m: GatewayMetrics, by: Record<string, SpendTotals>): void {
  for (const [component, t] of Object.entries(by)) {
    m.llmCalls.set({ component }, t.llm_calls);
    m.llmTokens.set({ component, direction: 'input' }, t.llm_input_tokens);
    m.llmTokens.set({ component, direction: 'output' }, t.llm_output_tokens);
    m.llmFailures.set({ component, kind: 'timeout' }, t.llm_timeouts);
    m.llmFailures.set({ component, kind: 'error' }, t.llm_errors);
    m.llmFailures.set({ component, kind: 'truncated' }, t.llm_truncated);
  }
}

/** A control-plane generation applied (propagation absent for the boot load). */
export function recordControl(
  m: GatewayMetrics,
  generation: number,
  propagationMs: number | undefined,
  versions: Record<string, number>,
): void {
  m.controlGeneration.set(generation);
  if (propagationMs !== undefined) m.controlPropagation.observe(propagationMs / 1000);
  for (const [tenant, version] of Object.entries(versions)) m.configVersion.set({ tenant: m.tenants.label(tenant) }, version);
}

export function recordRevocations(m: GatewayMetrics, byTenant: ReadonlyMap<string, number>): void {
  for (const [tenant, n] of byTenant) m.keyRevocations.inc({ tenant: m.tenants.label(tenant) }, n);
}

export function recordUpstream(m: GatewayMetrics, dialect: string, status: number | 'error', seconds: number): void {
  m.upstreamDuration.observe({ dialect }, seconds);
  m.upstreamResponses.inc({ dialect, status: status === 'error' ? 'error' : `${Math.floor(status / 100)}xx` });
}
