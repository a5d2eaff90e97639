// Turns an inbound body into the body to forward: decode, run the tenant's pipeline over the
// normalized messages, stash every original durably, splice the changes into the raw bytes.
// Any failure after decoding forwards the pristine body (fail open) and says why.
import {
  SUMMARY_CHECKPOINT_KEY,
  contentKey,
  messageText,
  messageTokens,
  totalTokens,
  type Clock,
  type Ctx,
  type HotStore,
  type ModelSources,
  Pipeline,
} from '@context-guru/components';
import type { InjectMode, CacheMode } from '../env';
import { emptyReport, type RequestReport, type RouteName } from '../observability/request-report';
import { errorText, type Logger } from '../observability/logger';
import { splitSavings } from '../observability/money';
import { isAgentCompaction } from '../session/agent-compaction';
import { cacheViewFor, isCacheAware, requestTtlMs } from '../session/cache-view';
import { guardCachedPrefix, rewrittenIndices } from '../session/cache-guard';
import { conversationKey } from '../session/conversation-key';
import { loadSessionFor, runWithSession } from '../session/session-run';
import { revisionOf, type TenantRuntime } from '../tenancy/tenant-runtime';
import { recordForwarded, replayForwarded } from '../tenancy/forwarded-replay';
import { decodeRequest, encodeRequest } from '../wire/request.wire';
import type { TurnCache } from '../wire/turn-cache';
import { pipelineCanEmitMarkers } from '../wire/expand-tool';
import { resolveSessionKey } from '../wire/session-key';
import type { Dialect, WireView } from '../wire/wire.types';

export interface PrepareDeps {
  store: HotStore;
  /** Reuses the previous turn's decode and encode for the byte-identical prefix (optional). */
  turns?: TurnCache;
  clock: Clock;
  log: Logger;
  injectMode: InjectMode;
}

export interface PrepareInput {
  route: RouteName;
  dialect: Dialect;
  raw: string;
  tenant: TenantRuntime;
  pipeline: Pipeline;
  cacheMode: CacheMode;
  sessionHeader?: string;
  bypassHeader: boolean;
  /**
   * The compression gate is full: no new compression work, only the provider-cached bytes of
   * earlier turns replayed (the tool list and markers stay as the tenant's pipeline has them).
   */
  shed?: boolean;
  /** The models this request may spend on, from its decoded body. */
  models?: (body: Record<string, unknown>) => ModelSources;
}

export interface Prepared {
  /** Absent on the transparent fast path (empty pipeline, no markers): nothing was decoded. */
  view?: WireView;
  session: string;
  /** The body to forward: rewritten, or the pristine inbound text. */
  outgoing: string;
  /** The outgoing body declares context_guru_expand, so expand calls are intercepted. */
  advertised: boolean;
  report: RequestReport;
}

/**
 * An empty pipeline with nothing to inject: the body goes out exactly as it came, undecoded —
 * unless the tenant's earlier config versions may have rewritten a live session (`replays`).
 */
const SHED_PIPELINE = new Pipeline([]);

export function isTransparent(pipeline: Pipeline, injectMode: InjectMode, replays = false): boolean {
  return pipeline.components.length === 0 && injectMode !== 'always' && !replays;
}

/** Decoding errors propagate (the caller answers 400); everything after decoding fails open. */
export async function prepareRequest(deps: PrepareDeps, input: PrepareInput): Promise<Prepared> {
  const started = performance.now();
  const report = emptyReport(input.route, input.tenant.id);
  // An empty pipeline is a transparent proxy (preset off): nothing to decide, no tool to inject
  // unless INJECT_EXPAND=always, so the client's bytes go out as they came.
  if (isTransparent(input.pipeline, deps.injectMode, input.tenant.replays)) {
    report.bypassed = input.bypassHeader;
    report.addedMs = performance.now() - started;
    return { session: '', outgoing: input.raw, advertised: false, report };
  }
  const decoded = deps.turns
    ? deps.turns.decode(input.dialect, input.raw, input.tenant.id)
    : { view: decodeRequest(input.dialect, input.raw), reuse: null };
  const view = decoded.view;
  const session = resolveSessionKey(view, input.sessionHeader, input.tenant.id);
  report.session = session;
  const pristine = (reason?: string): Prepared => {
    if (reason) {
      report.failOpen = reason;
      report.enforced = false;
    }
    report.addedMs = performance.now() - started;
    return { view, session, outgoing: input.raw, advertised: view.expandToolDeclared, report };
  };
  if (typeof view.body.model === 'string') report.model = view.body.model;
  const bypass = input.bypassHeader || isAgentCompaction(view.messages);
  // A shed request runs no component: replayForwarded then restores every forwarded record on the
  // cached prefix (they carry another revision than this empty pipeline's).
  const running = input.shed ? SHED_PIPELINE : input.pipeline;
  report.shed = input.shed === true;
  report.bypassed = bypass;
  try {
    const now = deps.clock.now();
    const n = view.messages.length;
    const ttlMs = requestTtlMs(input.dialect, input.raw, view.body);
    // Bypassed turns still advance the boundary: the provider cached what we forwarded.
    const conversation = conversationKey(session, view);
    if (bypass) {
      await deps.store.advanceTurn(input.tenant.id, conversation, { n, at: now, ttlMs });
      return pristine();
    }
    const keys: string[] = [];
    for (const m of view.messages) {
      if (m.role !== 'tool') continue;
      const text = messageText(m);
      if (text) keys.push(contentKey(text));
    }
    keys.push(SUMMARY_CHECKPOINT_KEY);
    // The turn advance and the session load are independent reads: issued together, they share
    // one round trip to a remote store.
    const loading = loadSessionFor({ store: deps.store, tenant: input.tenant.id, session, keys });
    const [prev, loaded] = await Promise.all([deps.store.advanceTurn(input.tenant.id, conversation, { n, at: now, ttlMs }), loading]);
    const turn = cacheViewFor(prev, n, isCacheAware(input.cacheMode), now, ttlMs);
    report.compactionReset = turn.compactionReset;
    const models = input.models?.(view.body);
    // Only model-backed triggers need the request's token count: computed on first read.
    let requestTokens: number | undefined;
    // A Reformat may hand offloaders text whose key differs from the received one; runWithSession
    // fetches what the prefetch missed and re-runs, so a frozen decision is never missed.
    const pipelineStart = performance.now();
    const { result, state, stash, snapshot } = await runWithSession({
      store: deps.store,
      tenant: input.tenant.id,
      session,
      keys,
      loaded,
      run: (stash, state) => {
        const ctx: Ctx = {
          tenant: input.tenant.id,
          session,
          provider: input.dialect,
          cache: turn.view,
          stash,
          state,
          clock: deps.clock,
          existingBreakpoints: view.breakpoints,
          window: 0,
          models,
          get requestTokens() {
            return (requestTokens ??= totalTokens(view.messages));
          },
        };
        return running.run(view.messages, ctx);
      },
    });
    // What an earlier config version forwarded on the cached prefix comes back byte-identical.
    replayForwarded(view.messages, result.messages, turn.view, prev, state, stash, revisionOf(running));
    const pipelineEnd = performance.now();
    const guarded = guardCachedPrefix(view.messages, result.messages, turn.view, prev);
    report.guardReverted = guarded.length;
    report.tokensBefore = result.tokensBefore;
    report.tokensAfter = guarded.length ? totalTokens(result.messages) : result.tokensAfter;
    report.reports = result.reports;
    report.frozenHits = state.hits;
    report.frozenMisses = state.misses;
    report.attemptedTokens = attemptedTokens(view, turn.view.aware && !turn.view.cold ? turn.view.maxCachedIdx : -1);

    const offered = expandOffered(deps.injectMode, view, {
      decided: snapshot.offloaded === true,
      firstTurn: prev === null,
      canEmit: pipelineCanEmitMarkers(
        input.pipeline,
        deps.store.persistent,
        input.tenant.document.components,
        models?.incoming !== undefined || models?.config !== undefined,
      ),
    });
    const inject = offered && !view.expandToolDeclared;
    const encoded = deps.turns
      ? deps.turns.encode(decoded, result.messages, { injectExpand: inject }, input.tenant.id)
      : encodeRequest(view, result.messages, { injectExpand: inject });
    chargeDiscards(report, [...encoded.discarded, ...guarded]);
    const rewritten = rewrittenIndices(view.messages, result.messages, encoded.discarded);
    recordForwarded(view.messages, result.messages, rewritten, state, revisionOf(running));
    report.saved = splitSavings(
      view.messages,
      result.messages,
      rewritten,
      turn.view.aware && !turn.view.cold ? turn.view.maxCachedIdx : -1,
    );
    // A marker may only leave once its original is acknowledged by the store every replica reads.
    const flushStart = performance.now();
    await Promise.all([
      stash.entries.size ? deps.store.putStash(input.tenant.id, session, stash.list()) : undefined,
      state.newFrozen.size || (offered && !snapshot.offloaded)
        ? deps.store.commitSession(input.tenant.id, session, { frozen: state.newFrozen, offloaded: offered })
        : undefined,
      rewritten.length ? deps.store.recordRewrites(input.tenant.id, conversation, rewritten) : undefined,
    ]);
    report.marks = { pipelineStart, pipelineEnd, flushStart, flushEnd: performance.now(), stashed: stash.entries.size };
    report.enforced = true;
    report.addedMs = performance.now() - started;
    return {
      view,
      session,
      outgoing: encoded.raw,
      advertised: view.expandToolDeclared || encoded.injected,
      report,
    };
  } catch (err) {
    deps.log.warn('pipeline failed open; forwarding the original body', { error: errorText(err), session });
    return pristine(classifyFailure(err));
  }
}

/**
 * Whether this turn offers the expand tool. The tool list opens the prompt in both providers'
 * caching order, so the answer is decided once per session — on its first turn, when the pipeline
 * can emit markers — and then replayed from the session state (every replica reads it) on every
 * later turn; a session that started without it never gets it mid-way. Requests without tools of
 * their own (title and summary side requests) are left alone unless INJECT_EXPAND=always.
 */
function expandOffered(mode: InjectMode, view: WireView, s: { decided: boolean; firstTurn: boolean; canEmit: boolean }): boolean {
  if (mode === 'never' || !view.toolChoiceAllowsInjection) return false;
  if (mode === 'always') return true;
  if (!view.toolsDeclared) return false;
  return s.decided || (s.firstTurn && s.canEmit);
}

function attemptedTokens(view: WireView, maxCachedIdx: number): number {
  let n = 0;
  for (let i = maxCachedIdx + 1; i < view.messages.length; i++) n += messageTokens(view.messages[i]!);
  return n;
}

/** Each discarded message is charged to the last component that changed it. */
function chargeDiscards(report: RequestReport, discarded: readonly number[]): void {
  for (const idx of discarded) {
    const last = [...report.reports].reverse().find((r) => !r.reverted && r.changed.includes(idx));
    if (last) report.discarded.set(last.component, (report.discarded.get(last.component) ?? 0) + 1);
  }
}

function classifyFailure(err: unknown): string {
  const name = err instanceof Error ? err.name : '';
  if (/Redis|Store|ECONNREFUSED|Connection/i.test(`${name} ${errorText(err)}`)) return 'store_unavailable';
  return 'internal_error';
}
