// extract: a large tool output is projected down to the lines the task needs — head and tail
// context, every line mentioning a query keyword, every line carrying an error word — with each
// gap collapsed to one "… N lines omitted" line. The original is stashed behind a marker.
//
// The projection is deterministic but NOT a pure function of the content: the keywords come from
// the conversation (first user turn + the most recent turns), which changes every turn. Re-deriving
// an old output's projection on a later turn could yield different bytes and bust the provider
// cache, so a decision is frozen per content key and replayed first, new decisions are tail-gated
// (cold_cache lifts that on a provably expired cache), and a lost freeze is never re-derived at
// depth — the same bytes are not guaranteed.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type ComponentOutcome, type Ctx, type Message } from '../component';
import { MarkerModeOption, NonNegInt } from '../shared/common-options';
import { ConfigError } from '../shared/errors';
import { HINT_FULL_OUTPUT, withToken } from '../shared/marker';
import { toolOutputs } from '../shared/message-text';
import { ModelOption, RequestTriggerFields, requestTriggerFires } from '../shared/model-options';
import { commitOffload, Gates, OffloadTally, rewritableText, settledByReplay, tailAllows } from '../shared/offload';
import { decodeOptions } from '../shared/options';
import { countTokens } from '../shared/tokens';
import { projectLines, queryKeywords } from '../shared/line-projection';
import { CODE_GATES, codeBatchFor } from './extract/code-strategy';

const NAME = 'extract';

const ExtractOptions = Type.Object({
  min_tokens: NonNegInt(300),
  head_lines: NonNegInt(5),
  tail_lines: NonNegInt(5),
  strategy: Type.Union([Type.Literal('deterministic'), Type.Literal('code'), Type.Literal('rlm')], {
    default: 'deterministic',
  }),
  model: ModelOption,
  trigger: Type.Object(
    {
      /** Per tool output; 0 means "use min_tokens" (the legacy floor folds in here). */
      min_output_tokens: NonNegInt(0),
      ...RequestTriggerFields,
    },
    { default: {} },
  ),
  marker_mode: MarkerModeOption,
  rewrite: Type.Boolean({ default: false }),
  cold_cache: Type.Boolean({ default: false }),
});

const EXTRACT_GATES = [
  'model_unavailable_fell_back_to_deterministic',
  'non_text_blocks',
  'marker_or_kept_verbatim',
  'request_trigger_not_fired',
  'below_output_floor',
  'no_query_keywords',
  'cached_prefix',
  'projection_not_smaller',
  'marker_no_win',
  ...CODE_GATES,
] as const;

type Options = ReturnType<typeof decode>;

function decode(raw: unknown, path: string) {
  const o = decodeOptions(ExtractOptions, raw, path);
  // rewrite drops the deletion-only guarantee: an unverified rewrite must not be presented as a
  // resolvable, faithful reduction, so it needs summary or off.
  if (o.rewrite && o.marker_mode === 'full') {
    throw new ConfigError('conflicting_options', `${path}.rewrite`, 'rewrite: true needs a non-full marker_mode (summary or off)');
  }
  return o;
}

function create(o: Options): Component {
  const floor = o.trigger.min_output_tokens > 0 ? o.trigger.min_output_tokens : o.min_tokens;
  return {
    name: NAME,
    kind: 'offload',
    async run(messages: Message[], ctx: Ctx): Promise<ComponentOutcome> {
      const gates = new Gates();
      const tally = new OffloadTally();
      const code =
        o.strategy === 'deterministic'
          ? undefined
          : codeBatchFor(messages, ctx, o.model.source, { rewrite: o.rewrite, model: o.model.model }, gates);
      const deterministic = (m: Message, text: string, keys: ReadonlySet<string>): void => {
        const projected = projectLines(text, keys, o.head_lines, o.tail_lines);
        if (projected === null) {
          gates.add('projection_not_smaller');
          return;
        }
        const r = commitOffload(m, text, (token) => withToken(projected, token, '\n'), ctx, o.marker_mode, HINT_FULL_OUTPUT, NAME);
        if (r.ok) tally.record(r);
        else gates.add('marker_no_win');
      };
      const fired = requestTriggerFires(messages, o.trigger, ctx);
      let keys: Set<string> | undefined;
      // Computed once, on the first output that needs it (most requests never do).
      const queryKeys = (): Set<string> => (keys ??= queryKeywords(messages));
      for (const { i, m } of toolOutputs(messages)) {
        const text = rewritableText(m, gates);
        if (text === null) continue;
        if (settledByReplay(NAME, m, text, ctx, gates, tally, i)) continue;
        if (!fired) {
          gates.add('request_trigger_not_fired');
          continue;
        }
        if (countTokens(text) < floor) {
          gates.add('below_output_floor');
          continue;
        }
        if (queryKeys().size === 0) {
          gates.add('no_query_keywords');
          continue;
        }
        if (!tailAllows(i, ctx, o.cold_cache)) {
          gates.add('cached_prefix');
          continue;
        }
        // code/rlm: the model calls start here and are awaited together below. Without a model
        // they degrade to the deterministic projection, counted so it is never mistaken for the
        // model strategy running.
        if (code) {
          code.add(i, m, text);
          continue;
        }
        if (o.strategy !== 'deterministic') gates.add('model_unavailable_fell_back_to_deterministic');
        deterministic(m, text, queryKeys());
      }
      // A model result is frozen like any decision: a re-sent output replays it with no new call.
      for (const job of code ? await code.settle() : []) {
        if (!job.outcome.ok) {
          gates.add(job.outcome.gate);
          deterministic(job.m, job.text, queryKeys());
          continue;
        }
        const reduced = job.outcome.text;
        const r = commitOffload(job.m, job.text, (token) => withToken(reduced, token, '\n'), ctx, o.marker_mode, HINT_FULL_OUTPUT, NAME);
        if (r.ok) tally.record(r);
        else gates.add('marker_no_win');
      }
      return { keys: tally.keys, irreversible: tally.irreversible, gates: gates.counts };
    },
  };
}

export const extractComponent = defineComponent({ name: NAME, kind: 'offload', gates: EXTRACT_GATES, options: decode, create });
