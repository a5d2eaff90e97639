// One summarize run: gate on the trigger, find a cut that keeps tool exchanges whole, reuse the
// session's checkpoint byte-identically while the un-summarized part stays small, and only then
// spend a model call — rolling forward from the previous summary rather than re-reading the span.
// Every way of not acting names a gate; a failed call keeps the previous checkpoint if one applies.
import type { ComponentOutcome, Ctx, Message } from '../../component';
import { pickModel, type ModelClient, type ModelSource } from '../../ports/model.port';
import { frozenMarkerId } from '../../ports/stash.port';
import { HINT_FULL_TRAJECTORY, markerIds, markerToken, type MarkerMode } from '../../shared/marker';
import { requestTriggerFires } from '../../shared/model-options';
import { Gates } from '../../shared/offload';
import { countTokens } from '../../shared/tokens';
import { completeOnce } from '../model/reply-memo';
import { coveredEnd, readCheckpoint, writeCheckpoint, type Checkpoint } from './checkpoint';
import { planSpan, rangeTokens, spanHash, spanStashText } from './span';
import { buildSummaryRequest, parseSummary, summaryMessageText, type SummaryLevel } from './summary-prompt';

export const SUMMARIZE_RUN_GATES = [
  'no_model',
  'request_trigger_not_fired',
  'no_span',
  'span_below_min_tokens',
  'model_source_fell_back_to_config',
  'model_call_failed',
  'model_reply_rejected',
  'summary_not_smaller',
] as const;

export interface SummarizeSettings {
  summary_level: SummaryLevel;
  keep_last: number;
  min_tokens: number;
  resummarize_tokens: number;
  include_tool_calls: boolean;
  model: { source: ModelSource; model?: string };
  trigger: { min_request_tokens: number; min_messages: number };
  marker_mode: MarkerMode;
}

/** Replaces messages[start, end) with one user-role summary message; returns the outcome. */
function apply(messages: Message[], ctx: Ctx, start: number, end: number, text: string, gates: Gates): ComponentOutcome {
  let keys: string[] | undefined;
  const ids = markerIds(text);
  if (ids.length) {
    // A replayed checkpoint keeps the id it was frozen with (unkeyed, when frozen before ids were keyed).
    const span = spanStashText(messages, start, end);
    keys = [ctx.stash.put(span, frozenMarkerId(ids, span, ctx.stash))];
  }
  messages.splice(start, end - start, { role: 'user', content: text });
  return keys ? { keys, gates: gates.counts } : { irreversible: true, gates: gates.counts };
}

/** The session's checkpoint and where its coverage of the span ends, when it may be replayed. */
interface Replay {
  cp: Checkpoint;
  covered: number;
}

/** A checkpoint whose marker the store cannot hold is not replayed (its marker would not resolve). */
function replayable(messages: Message[], ctx: Ctx, start: number, end: number): Replay | null {
  const cp = readCheckpoint(ctx.state);
  if (!cp || (markerIds(cp.text).length && !ctx.stash.persistent)) return null;
  const covered = coveredEnd(cp, messages, start, end, ctx.stash);
  ctx.state.countReplay(covered !== null);
  return covered === null ? null : { cp, covered };
}

/** One model call over the span, rolling forward from the replayed summary; null once it named its gate. */
async function summarizeSpan(
  client: ModelClient,
  messages: Message[],
  ctx: Ctx,
  o: SummarizeSettings,
  span: { start: number; end: number },
  replay: Replay | null,
  gates: Gates,
): Promise<string | null> {
  try {
    const request = buildSummaryRequest({
      messages,
      from: replay?.covered ?? span.start,
      to: span.end,
      previous: replay?.cp.summary,
      level: o.summary_level,
      includeToolCalls: o.include_tool_calls,
      model: o.model.model,
    });
    const summary = parseSummary(await completeOnce(client, request, ctx));
    if (summary === null) gates.add('model_reply_rejected');
    return summary;
  } catch {
    gates.add('model_call_failed');
    return null;
  }
}

export async function runSummarize(messages: Message[], ctx: Ctx, o: SummarizeSettings): Promise<ComponentOutcome> {
  const gates = new Gates();
  const pass = (gate: string): ComponentOutcome => {
    gates.add(gate);
    return { skipped: true, gates: gates.counts };
  };
  if (!requestTriggerFires(messages, o.trigger, ctx)) return pass('request_trigger_not_fired');
  const span = planSpan(messages, o.keep_last, ctx.origin);
  if (!span) return pass('no_span');
  const { start, end } = span;

  const replay = replayable(messages, ctx, start, end);
  // From here on, not acting replays the checkpoint byte-identically when one applies.
  const notActing = (gate?: string): ComponentOutcome => {
    if (gate) gates.add(gate);
    return replay ? apply(messages, ctx, start, replay.covered, replay.cp.text, gates) : { skipped: true, gates: gates.counts };
  };
  if (replay && rangeTokens(messages, replay.covered, end) < o.resummarize_tokens) return notActing();

  const { client, fellBack } = pickModel(ctx.models, o.model.source);
  if (!client) return notActing('no_model');
  if (fellBack) gates.add('model_source_fell_back_to_config');
  const spanTokens = rangeTokens(messages, start, end);
  if (!replay && spanTokens < o.min_tokens) return notActing('span_below_min_tokens');

  const summary = await summarizeSpan(client, messages, ctx, o, span, replay, gates);
  if (summary === null) return notActing();

  const mode: MarkerMode = o.marker_mode === 'full' && !ctx.stash.persistent ? 'off' : o.marker_mode;
  if (mode === 'full' && ctx.stash.full === true) return notActing('stash_full');
  const id = ctx.stash.idOf(spanStashText(messages, start, end));
  const text = summaryMessageText(summary, end - start, markerToken(mode, id, HINT_FULL_TRAJECTORY));
  if (countTokens(text) >= spanTokens) return notActing('summary_not_smaller');
  writeCheckpoint(ctx.state, { v: 1, spanHash: spanHash(messages, start, end), count: end - start, summary, text });
  return apply(messages, ctx, start, end, text, gates);
}
