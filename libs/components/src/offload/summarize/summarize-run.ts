// One summarize run: gate on the trigger, find a cut that keeps tool exchanges whole, reuse the
// session's checkpoint byte-identically while the un-summarized part stays small, and only then
// spend a model call — rolling forward from the previous summary rather than re-reading the span.
// Every way of not acting names a gate; a failed call keeps the previous checkpoint if one applies.
import type { ComponentOutcome, Ctx, Message } from '../../component';
import { pickModel, type ModelSource } from '../../ports/model.port';
import { HINT_FULL_TRAJECTORY, markerIds, markerToken, stashId, type MarkerMode } from '../../shared/marker';
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
  if (markerIds(text).length) keys = [ctx.stash.put(spanStashText(messages, start, end))];
  messages.splice(start, end - start, { role: 'user', content: text });
  return keys ? { keys, gates: gates.counts } : { irreversible: true, gates: gates.counts };
}

export async function runSummarize(messages: Message[], ctx: Ctx, o: SummarizeSettings): Promise<ComponentOutcome> {
  const gates = new Gates();
  const pass = (gate?: string): ComponentOutcome => {
    if (gate) gates.add(gate);
    return { skipped: true, gates: gates.counts };
  };
  if (!requestTriggerFires(messages, o.trigger, ctx)) return pass('request_trigger_not_fired');
  const span = planSpan(messages, o.keep_last);
  if (!span) return pass('no_span');
  const { start, end } = span;

  // A checkpoint whose marker the store cannot hold is not replayed (its marker would not resolve).
  let cp: Checkpoint | undefined = readCheckpoint(ctx.state);
  if (cp && markerIds(cp.text).length && !ctx.stash.persistent) cp = undefined;
  const covered = cp ? coveredEnd(cp, messages, start, end) : null;
  if (cp) ctx.state.countReplay(covered !== null);
  const reuse = (): ComponentOutcome => apply(messages, ctx, start, covered!, cp!.text, gates);
  if (covered !== null && rangeTokens(messages, covered, end) < o.resummarize_tokens) return reuse();

  const { client, fellBack } = pickModel(ctx.models, o.model.source);
  if (!client) {
    gates.add('no_model');
    return covered !== null ? reuse() : pass();
  }
  if (fellBack) gates.add('model_source_fell_back_to_config');
  const spanTokens = rangeTokens(messages, start, end);
  if (covered === null && spanTokens < o.min_tokens) return pass('span_below_min_tokens');

  let summary: string | null;
  try {
    const reply = await completeOnce(
      client,
      buildSummaryRequest({
        messages,
        from: covered ?? start,
        to: end,
        previous: covered !== null ? cp!.summary : undefined,
        level: o.summary_level,
        includeToolCalls: o.include_tool_calls,
        model: o.model.model,
      }),
      ctx,
    );
    summary = parseSummary(reply);
    if (summary === null) gates.add('model_reply_rejected');
  } catch {
    summary = null;
    gates.add('model_call_failed');
  }
  if (summary === null) return covered !== null ? reuse() : pass();

  const mode: MarkerMode = o.marker_mode === 'full' && !ctx.stash.persistent ? 'off' : o.marker_mode;
  const id = stashId(spanStashText(messages, start, end));
  const text = summaryMessageText(summary, end - start, markerToken(mode, id, HINT_FULL_TRAJECTORY));
  if (countTokens(text) >= spanTokens) {
    gates.add('summary_not_smaller');
    return covered !== null ? reuse() : pass();
  }
  writeCheckpoint(ctx.state, { v: 1, spanHash: spanHash(messages, start, end), count: end - start, summary, text });
  return apply(messages, ctx, start, end, text, gates);
}
