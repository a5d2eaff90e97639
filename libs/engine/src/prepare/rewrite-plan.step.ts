// Step 3b: the priced rewrite. Components proposed decisions inside the provider's cached prefix;
// the planner keeps the one cut that pays back within the tenant's window and puts the rest back
// as the client sent them, their freezes dropped, so a later turn may propose them again.
import { messageText, type Message } from '@context-guru/components';
import type { PlannedRewriteReport } from '../report/request-report';
import { planRewrite, type RewriteRates } from '../session/rewrite-planner';
import type { SessionRun } from '../session/session-run';
import { messageOrigin } from '../wire/request.wire';
import type { OpenedSession } from './session-open.step';
import type { Preparing } from './prepare.types';
import type { Decoded } from './prepare.types';

const ONE_HOUR = 60 * 60_000;

export interface RewritePlanned {
  /** Normalized indices the cut keeps changed inside the cached prefix (the guard allows them). */
  kept: number[];
  /** Proposals put back. */
  declined: number[];
}

/** A declined proposal is passed over as before pricing was: under its component's cached_prefix gate. */
function gateDeclined(run: SessionRun, declined: readonly number[]): void {
  for (const i of declined) {
    const by = [...run.result.reports].reverse().find((r) => !r.reverted && r.changed.includes(i));
    if (by) by.gates.cached_prefix = (by.gates.cached_prefix ?? 0) + 1;
  }
}

/** Whether this turn prices rewrites at depth: a warm, cache-aware turn with something cached. */
export function pricesRewrites(p: Preparing, s: OpenedSession): boolean {
  const cache = s.cached.view;
  // The previous turn's rewrites must be known: a message it forwarded rewritten takes no new decision.
  return (p.deps.rewrites?.paybackTurns ?? 0) > 0 && cache.aware && cache.maxCachedIdx >= 0 && s.prev?.rewritten !== undefined;
}

/** The request's model, which prices the plan: the path's on a route that names it there. */
function modelOf(p: Preparing, d: Decoded): string | undefined {
  return p.input.model ?? (typeof d.view.body.model === 'string' ? d.view.body.model : undefined);
}

function ratesFor(p: Preparing, d: Decoded, s: OpenedSession): RewriteRates {
  const model = modelOf(p, d);
  const prices = p.deps.rewrites?.prices.lookup(p.input.dialect, model);
  if (!prices || prices.input <= 0) return { write: 1.25, read: 0.1 };
  // Anthropic bills a 1 h cache write at twice the input price (the table holds the 5-minute rate).
  const write = p.input.dialect === 'anthropic' && s.cached.ttlMs >= ONE_HOUR ? 2 * prices.input : prices.cache_write;
  return { write: write / prices.input, read: prices.cache_read / prices.input };
}

export function planRewriteStep(
  p: Preparing,
  d: Decoded,
  s: OpenedSession,
  run: SessionRun,
  proposals: ReadonlyMap<number, Message>,
): RewritePlanned {
  const messages = run.result.messages;
  if (proposals.size === 0 || !p.deps.rewrites) return { kept: [], declined: [] };
  const rates = ratesFor(p, d, s);
  // What each proposal was rewritten to: the freezes to forget when it is put back.
  const proposed = new Map([...proposals.keys()].map((i) => [i, messageText(messages[i] as Message) ?? '']));
  const { plan, reverted } = planRewrite({
    dialect: p.input.dialect,
    input: d.view.messages,
    output: messages,
    proposals,
    cachedIdx: s.cached.view.maxCachedIdx,
    rates,
    policy: { paybackTurns: p.deps.rewrites.paybackTurns },
    anchored: p.input.pipeline.components.some((c) => c.name === 'cacheinject'),
  });
  if (reverted.length) {
    run.state.unfreezeReplacements(new Set(reverted.map((i) => proposed.get(i) ?? '').filter((t) => t !== '')));
    gateDeclined(run, reverted);
  }
  if (!plan) return { kept: [], declined: reverted };
  const kept = [...proposals.keys()].filter((i) => i >= plan.from && i <= s.cached.view.maxCachedIdx && !reverted.includes(i));
  const model = modelOf(p, d);
  const prices = p.deps.rewrites.prices.lookup(p.input.dialect, model);
  const usd = (tokens: number) => (tokens * prices.input) / 1e6;
  const report: PlannedRewriteReport = {
    from: messageOrigin(d.view).of[plan.from] ?? plan.from,
    costTokens: Math.round(plan.costTokens),
    removedTokens: plan.removedTokens,
    savingPerTurn: Math.round(plan.savingPerTurn),
    paybackTurns: plan.paybackTurns,
    costUsd: usd(plan.costTokens),
    savingUsdPerTurn: usd(plan.savingPerTurn),
  };
  p.report.planned = report;
  return { kept, declined: reverted };
}
