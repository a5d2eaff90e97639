// Step 3: the tenant's pipeline over the normalized messages, with the session's frozen decisions;
// then what an earlier config version forwarded on the cached prefix comes back byte-identical,
// and nothing on that prefix changes at all.
import {
  cloneMessage,
  messageText,
  sameMessage,
  setText,
  type DepthProposals,
  type Message,
  type SessionView,
  messageTokens,
  totalTokens,
  type Ctx,
  type MessageOrigin,
  type ModelClient,
  type ModelSources,
  type SessionSnapshot,
} from '@context-guru/components';
import { guardCachedPrefix } from '../session/cache-guard';
import { planRewriteStep, pricesRewrites } from './rewrite-plan.step';
import { firstRun, rerun, settled, type SessionRun, type SessionRunInput } from '../session/session-run';
import { forwardedText, replayForwarded } from '../tenancy/forwarded-replay';
import { revisionOf } from '../tenancy/tenant-runtime';
import { messageOrigin } from '../wire/request.wire';
import type { WireView } from '../wire/wire.types';
import type { OpenedSession } from './session-open.step';
import type { Preparing } from './prepare.types';
import { keepsOriginals } from '../tenancy/tenant-runtime';
import type { Decoded } from './prepare.types';

export interface PipelineRan extends SessionRun {
  models: ModelSources | undefined;
  /** Normalized indices on the cached prefix the guard put back as received. */
  guarded: number[];
  /** Proposals at depth the rewrite planner put back (they did not pay). */
  declined: number[];
  /** Index of the last provider-cached message a rewrite may not touch (-1: none). */
  cachedIdx: number;
  pipelineStart: number;
  pipelineEnd: number;
  /** A component called a model (its answer may differ next time: the run is not a pure function). */
  modelAsked: boolean;
}

/** A run again: the turn's guarded write found what the store knew (`known`) about `after`'s unknown keys. */
export interface Rerun {
  after: PipelineRan;
  known: SessionSnapshot;
}

export async function runPipelineStep(p: Preparing, d: Decoded, s: OpenedSession, again?: Rerun): Promise<PipelineRan> {
  const { deps, input, report } = p;
  const { view, session } = d;
  const cache = s.cached.view;
  let modelAsked = false;
  const models = watched(input.models?.(view.body), () => (modelAsked = true));
  // Only model-backed triggers need the request's token count: computed on first read.
  let requestTokens: number | undefined;
  let origin: MessageOrigin | undefined;
  // A Reformat may hand offloaders text whose key differs from the received one: the keys the
  // prefetch missed guard the turn's write, and when the store knew them the turn runs again here,
  // so a frozen decision is never missed.
  const pipelineStart = again?.after.pipelineStart ?? performance.now();
  const priced = pricesRewrites(p, s);
  // The last run's proposals are the ones its messages carry.
  let proposals = new Map<number, Message>();
  // Loaded once per tenant and process: then a map read, no await.
  const ids = deps.ids?.idsFor(input.tenant.id);
  const runInput: SessionRunInput = {
    store: deps.store,
    persistent: keepsOriginals(input.tenant, deps.store),
    idOf: ids instanceof Promise ? await ids : ids,
    tenant: input.tenant.id,
    session,
    keys: s.keys,
    loaded: s.loaded,
    learned: p.learned,
    run: (stash, state) => {
      const depth = (proposals = new Map<number, Message>());
      const ctx: Ctx = {
        tenant: input.tenant.id,
        session,
        provider: input.dialect,
        cache,
        ...(priced && { depth: depthProposals(view.messages, s, state, depth) }),
        stash,
        state,
        clock: deps.clock,
        existingBreakpoints: view.breakpoints,
        window: 0,
        models,
        get requestTokens() {
          return (requestTokens ??= totalTokens(view.messages));
        },
        // keep_last counts the client's messages, not the normalized ones (summarize).
        get origin() {
          return (origin ??= messageOrigin(view));
        },
      };
      return d.running.run(view.messages, ctx);
    },
  };
  const ran = await (again ? rerun(runInput, again.after, again.known) : firstRun(runInput));
  // Without a guarded write the missed keys cost nothing to look up now, and the turn is encoded once.
  const run = deps.store.commitTurn ? ran : await settled(runInput, ran);
  const { result, state, stash } = run;
  replayForwarded(view.messages, result.messages, cache, s.prev, state, stash, revisionOf(d.running));
  const pipelineEnd = performance.now();
  const plan = planRewriteStep(p, d, s, run, proposals);
  const guarded = guardCachedPrefix(view.messages, result.messages, cache, s.prev, plan.kept);
  const cachedIdx = cache.aware && !cache.cold ? cache.maxCachedIdx : -1;
  report.guardReverted = guarded.length;
  report.tokensBefore = result.tokensBefore;
  report.tokensAfter = guarded.length || plan.declined.length ? totalTokens(result.messages) : result.tokensAfter;
  report.reports = result.reports;
  report.frozenHits = state.hits;
  report.frozenMisses = state.misses;
  report.attemptedTokens = attemptedTokens(view, cachedIdx);
  return { ...run, models, guarded, declined: plan.declined, cachedIdx, pipelineStart, pipelineEnd, modelAsked };
}

/**
 * Proposals at depth, each over the message as the proposing component found it, priced against
 * what the provider holds there: the client's message where the previous turn forwarded it
 * verbatim, else the text the previous turn forwarded (its `forwarded` record). A component early
 * in the pipeline finds the client's message where a later one rewrote it (mask before extract in
 * `agent`): its proposal replaces the whole output, so it is priced against the rewrite held.
 */
function depthProposals(input: readonly Message[], s: OpenedSession, state: SessionView, into: Map<number, Message>): DepthProposals {
  const rewritten = new Set(s.prev?.rewritten ?? []);
  return {
    propose(i, before) {
      const client = input[i];
      if (!rewritten.has(i)) {
        const held = sameMessage(client, before);
        if (held) into.set(i, cloneMessage(before));
        return held;
      }
      const sent = forwardedText(state, client, i);
      const found = messageText(before) ?? undefined;
      if (sent === undefined || (found !== sent && (client === undefined || !sameMessage(client, before)))) return false;
      const held = cloneMessage(before);
      setText(held, sent);
      into.set(i, held);
      return true;
    },
  };
}

/** The same sources, `onCall` told of every call (one the reply memo answers too). */
function watched(sources: ModelSources | undefined, onCall: () => void): ModelSources | undefined {
  if (!sources?.incoming && !sources?.config) return sources;
  const watch = (c: ModelClient): ModelClient => ({
    id: c.id,
    complete(req) {
      onCall();
      return c.complete(req);
    },
  });
  const { replies } = sources;
  return {
    ...sources,
    incoming: sources.incoming && watch(sources.incoming),
    config: sources.config && watch(sources.config),
    replies: replies && {
      complete(client, req, scope) {
        onCall();
        return replies.complete(client, req, scope);
      },
    },
  };
}

function attemptedTokens(view: WireView, maxCachedIdx: number): number {
  return view.messages.slice(maxCachedIdx + 1).reduce((n, m) => n + messageTokens(m), 0);
}
