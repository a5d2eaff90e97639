// Turns an inbound body into the body to forward: decode, run the tenant's pipeline over the
// normalized messages, stash every original durably, splice the changes into the raw bytes.
// Any failure after decoding forwards the pristine body (fail open) and says why.
// Each step is a function in ./prepare/, called here in request order.
import type { KeyedNames, Pipeline } from '@context-guru/components';
import { isStoreUnavailable } from '@context-guru/storage';
import type { FailOpenReason, InjectMode } from './engine.types';
import { emptyReport } from './report/request-report';
import { errorText } from './logger';
import { LearnedKeys } from './session/session-run';
import { decodeStep, nameSession } from './prepare/decode.step';
import { legacyNames } from './prepare/legacy-session.step';
import { encodeStep } from './prepare/encode.step';
import { flushStep } from './prepare/flush.step';
import { runPipelineStep } from './prepare/pipeline-run.step';
import { advanceBypassed, freshLoad, openSession, turnAt } from './prepare/session-open.step';
import { holdoutStep } from './prepare/holdout.step';
import { rememberRun, repeatDecoded, repeatHolds, repeatTurnAt, replayRepeat } from './prepare/repeat.step';
import type { PrepareDeps, PrepareInput, Prepared, Preparing } from './prepare/prepare.types';

export type { PrepareDeps, PrepareInput, Prepared } from './prepare/prepare.types';
import type { Decoded } from './prepare/prepare.types';

/**
 * An empty pipeline with nothing to inject: the body goes out exactly as it came, undecoded —
 * unless the tenant's earlier config versions may have rewritten a live session (`replays`).
 */
export function isTransparent(pipeline: Pipeline, injectMode: InjectMode, replays = false): boolean {
  return pipeline.components.length === 0 && injectMode !== 'always' && !replays;
}

/** Decoding errors propagate (the caller answers 400); everything after decoding fails open. */
export async function prepareRequest(deps: PrepareDeps, input: PrepareInput): Promise<Prepared> {
  const started = performance.now();
  const report = emptyReport(input.route, input.tenant.id);
  const learned = deps.learned ?? new LearnedKeys();
  // An empty pipeline is a transparent proxy (preset off): nothing to decide, no tool to inject
  // unless INJECT_EXPAND=always, so the client's bytes go out as they came.
  if (isTransparent(input.pipeline, deps.injectMode, input.tenant.replays)) return untouched({ deps, input, report, learned, started });
  // The tenant's keyed names: a map read once its keys are loaded; a load that fails fails open below.
  const loading = keyedNames(deps, input.tenant.id);
  const named = loading instanceof Promise ? await loading : loading;
  const p: Preparing = { deps, input, report, learned, started, ...(!(named instanceof Error) && named && { names: named }) };
  // A body this session already sent: its decode is remembered (a byte-identical body decodes the same).
  const repeat = deps.repeats?.find(input);
  let d = repeat ? repeatDecoded(p, repeat) : decodeStep(p);
  try {
    if (named instanceof Error) throw named;
    let at = repeat ? repeatTurnAt(p, repeat) : turnAt(p, d);
    if (!repeat) [d, at] = await legacyNames(p, d, at);
    if (d.bypass) {
      await advanceBypassed(p, at);
      return pristine(p, d);
    }
    let opened = await openSession(p, d, at, repeat);
    const arm = await holdoutStep(p, d, opened);
    if (arm.arm === 'holdout') return pristine(p, d);
    if (repeat) {
      if (repeatHolds(p, repeat, opened, arm.record)) return await replayRepeat(p, repeat, at);
      // The store moved on since: the full run, on a decode of its own (the turn cache's bookkeeping)
      // and on what the store answers now.
      d = { ...decodeStep(p), session: d.session };
      nameSession(p, d.session);
      opened = await freshLoad(p, d, opened, at.mark.at);
    }
    let ran = await runPipelineStep(p, d, opened);
    let encoded = encodeStep(p, d, opened, ran);
    // The write is guarded by the keys the run could not ask for up front; when the store knew
    // something about them it wrote nothing, and the turn runs again on what it knew.
    let known = await flushStep(p, d, at, ran, encoded, arm.record);
    while (known) {
      ran = await runPipelineStep(p, d, opened, { after: ran, known });
      encoded = encodeStep(p, d, opened, ran);
      known = await flushStep(p, d, at, ran, encoded, arm.record);
    }
    rememberRun(p, d, at, opened, ran, encoded, arm.record);
    p.report.enforced = true;
    p.report.addedMs = performance.now() - p.started;
    return {
      view: d.view,
      session: d.session,
      outgoing: encoded.raw,
      encoded: encoded.bytes,
      advertised: d.view.expandToolDeclared || encoded.injected,
      report: p.report,
    };
  } catch (err) {
    deps.log.warn('pipeline failed open; forwarding the original body', { error: errorText(err), session: d.session });
    deps.repeats?.forget(input);
    // The code comes with the error from where it was thrown: a store that did not answer says so.
    return pristine(p, d, isStoreUnavailable(err) ? 'store_unavailable' : 'internal_error');
  }
}

/** The tenant's keyed names (undefined without a key ring), or why they could not be loaded. */
function keyedNames(deps: PrepareDeps, tenant: string): KeyedNames | undefined | Error | Promise<KeyedNames | Error> {
  const failure = (err: unknown) => (err instanceof Error ? err : new Error(String(err)));
  try {
    const names = deps.ids?.namesFor?.(tenant);
    return names instanceof Promise ? names.catch(failure) : names;
  } catch (err) {
    return failure(err);
  }
}

/** The transparent fast path: nothing decoded, no session. */
function untouched(p: Preparing): Prepared {
  p.report.bypassed = p.input.bypassHeader;
  p.report.addedMs = performance.now() - p.started;
  return { session: '', outgoing: p.input.raw, advertised: false, report: p.report };
}

/** The inbound text goes out as it came: bypassed, or failed open for `reason`. */
function pristine(p: Preparing, d: Decoded, reason?: FailOpenReason): Prepared {
  if (reason) {
    p.report.failOpen = reason;
    p.report.enforced = false;
  }
  p.report.addedMs = performance.now() - p.started;
  return { view: d.view, session: d.session, outgoing: p.input.raw, advertised: d.view.expandToolDeclared, report: p.report };
}
