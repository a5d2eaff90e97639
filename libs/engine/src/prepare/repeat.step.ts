// The repeated turn (./repeat-memo.ts) on the request path: the remembered decode stands in for
// decoding; after the session is opened as usual, a store that answers what it answered the
// remembered run gets the same writes that run made, and the remembered bytes go out. A full run
// that qualifies is remembered for the next identical body.
import { slidLately, type TurnAt, type OpenedSession } from './session-open.step';
import type { Encoded } from './encode.step';
import type { PipelineRan } from './pipeline-run.step';
import type { Prepared, Preparing } from './prepare.types';
import { forwardedBytes, storeAnswersAgain } from './repeat-memo';
import type { Decoded } from './prepare.types';
import type { RepeatEntry } from './prepare.types';
import { nameSession } from './decode.step';

/** The remembered decode, reported as decodeStep reports a fresh one. */
export function repeatDecoded(p: Preparing, e: RepeatEntry): Decoded {
  const { report } = p;
  const d = e.decoded;
  nameSession(p, d.session);
  if (typeof d.view.body.model === 'string') report.model = d.view.body.model;
  report.shed = p.input.shed === true;
  report.bypassed = false;
  return d;
}

/** This turn's record: what the bytes determine comes from the entry, the time from the clock. */
export function repeatTurnAt(p: Preparing, e: RepeatEntry): TurnAt {
  return { conversation: e.conversation, mark: { n: e.decoded.view.messages.length, at: p.deps.clock.now(), ttlMs: e.ttlMs } };
}

/** The remembered run would run again on the same inputs, so its output and writes are this turn's. */
export function repeatHolds(p: Preparing, e: RepeatEntry, s: OpenedSession, recordArm: boolean): boolean {
  const models = p.input.models?.(e.decoded.view.body);
  const hadModels = models?.incoming !== undefined || models?.config !== undefined;
  const holds = !recordArm && hadModels === e.hadModels && storeAnswersAgain(e, s.prev, s.cached, s.loaded);
  // The store answered as it did: what it vouches for now stands for the remembered load.
  if (holds && !s.load.reused) e.load = s.load;
  const memo = p.deps.repeats; // the caller found e in it, so it is there
  if (memo && holds) memo.hits++;
  else if (memo) memo.misses++;
  return holds;
}

export async function replayRepeat(p: Preparing, e: RepeatEntry, at: TurnAt): Promise<Prepared> {
  const { deps, input, report } = p;
  const tenant = input.tenant.id;
  const replayedAt = performance.now();
  // What the full run's flush writes on such a turn: the rewrites the next turn's guard reads, and
  // the originals re-put so the markers in these bytes stay resolvable (unless put lately: slidLately).
  const restash = e.stash.length > 0 && !slidLately(e.stashedAt, at.mark.at);
  await Promise.all([
    restash ? deps.store.putStash(tenant, e.decoded.session, e.stash) : undefined,
    e.rewritten.length ? deps.store.recordRewrites(tenant, at.conversation, e.rewritten) : undefined,
  ]);
  if (restash) e.stashedAt = at.mark.at;
  const t = e.report;
  report.tokensBefore = t.tokensBefore;
  report.tokensAfter = t.tokensAfter;
  report.attemptedTokens = t.attemptedTokens;
  // The decisions replayed are counted as the full run counts them; no component ran, so no time.
  report.reports = t.reports.map((r) => ({ ...r, durationMs: 0 }));
  report.discarded = new Map(t.discarded);
  report.frozenHits = t.frozenHits;
  report.frozenMisses = t.frozenMisses;
  report.guardReverted = t.guardReverted;
  report.saved = { ...t.saved };
  report.marks = {
    pipelineStart: replayedAt,
    pipelineEnd: replayedAt,
    flushStart: replayedAt,
    flushEnd: performance.now(),
    stashed: restash ? e.stash.length : 0,
  };
  report.enforced = true;
  report.addedMs = performance.now() - p.started;
  const { view, session } = e.decoded;
  return { view, session, outgoing: e.outgoing, encoded: forwardedBytes(e), advertised: e.advertised, report };
}

/**
 * Remembers a full run for the next identical body, unless its turn wrote anything a repeat would
 * have to write again (decisions, the expand tool's offer, an arm), re-read the store for keys its
 * prefetch missed, or asked a model (whose answer may differ next time).
 */
export function rememberRun(
  p: Preparing,
  d: Decoded,
  at: TurnAt,
  s: OpenedSession,
  ran: PipelineRan,
  e: Encoded,
  recordArm: boolean,
): void {
  const memo = p.deps.repeats;
  const { input, report } = p;
  if (!memo) return;
  const wrote = ran.state.newFrozen.size > 0 || (e.offered && !ran.snapshot.offloaded) || recordArm;
  if (wrote || ran.runs !== 1 || ran.modelAsked) {
    memo.forget(input);
    return;
  }
  memo.remember(input, {
    raw: input.raw,
    bytes: input.bytes,
    tenant: input.tenant,
    pipeline: input.pipeline,
    cacheMode: input.cacheMode,
    decoded: d,
    conversation: at.conversation,
    ttlMs: at.mark.ttlMs,
    keys: s.keys,
    hadModels: ran.models?.incoming !== undefined || ran.models?.config !== undefined,
    prev: s.prev,
    cached: s.cached,
    loaded: s.loaded,
    load: s.load,
    outgoing: e.raw,
    outgoingBytes: e.bytes,
    advertised: d.view.expandToolDeclared || e.injected,
    stash: ran.stash.list(),
    stashedAt: at.mark.at,
    rewritten: e.rewritten,
    report: {
      tokensBefore: report.tokensBefore,
      tokensAfter: report.tokensAfter,
      attemptedTokens: report.attemptedTokens,
      reports: report.reports,
      discarded: new Map(report.discarded),
      frozenHits: report.frozenHits,
      frozenMisses: report.frozenMisses,
      guardReverted: report.guardReverted,
      saved: { ...report.saved },
    },
  });
}
