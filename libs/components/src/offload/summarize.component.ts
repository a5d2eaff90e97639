// summarize: compresses the middle of a long trajectory into one model-written user-role summary
// message, cut so tool exchanges stay whole in both dialects. The summary is checkpointed per
// session and replayed byte-identically until the un-summarized part passes resummarize_tokens.
// Without a model it is a recorded no-op (gate `no_model`), never a silent one. The run itself
// lives in summarize/summarize-run.ts.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type ComponentOutcome, type Ctx, type Message } from '../component';
import { MarkerModeOption, NonNegInt } from '../shared/common-options';
import { ModelOption, RequestTriggerFields } from '../shared/model-options';
import { decodeOptions } from '../shared/options';
import { SUMMARIZE_RUN_GATES, runSummarize } from './summarize/summarize-run';

const NAME = 'summarize';

const SummarizeOptions = Type.Object({
  summary_level: Type.Union([Type.Literal('concise'), Type.Literal('regular'), Type.Literal('highly_detailed')], {
    default: 'regular',
  }),
  /** Newest client messages kept verbatim after the summary (counted on ctx.origin when the gateway gives it). */
  keep_last: NonNegInt(3),
  /** Span floor: the middle must be at least this large to be worth a summary. */
  min_tokens: NonNegInt(500),
  /** Un-summarized tail size that rolls the checkpoint forward with a fresh summary. */
  resummarize_tokens: NonNegInt(6000),
  /** false: tool outputs are masked in the trajectory the summarizer sees. */
  include_tool_calls: Type.Boolean({ default: false }),
  model: ModelOption,
  trigger: Type.Object(RequestTriggerFields, { default: {} }),
  /** Legacy: folds into trigger.min_messages when that is unset. */
  start_from_message: Type.Optional(NonNegInt(0)),
  marker_mode: MarkerModeOption,
});

const SUMMARIZE_GATES = SUMMARIZE_RUN_GATES;

type Options = ReturnType<typeof decode>;

function decode(raw: unknown, path: string) {
  const o = decodeOptions(SummarizeOptions, raw, path);
  const { start_from_message, ...rest } = o;
  if (start_from_message !== undefined && rest.trigger.min_messages === 0) {
    rest.trigger = { ...rest.trigger, min_messages: start_from_message };
  }
  return rest;
}

function create(o: Options): Component {
  return {
    name: NAME,
    kind: 'offload',
    run(messages: Message[], ctx: Ctx): Promise<ComponentOutcome> {
      return runSummarize(messages, ctx, o);
    },
  };
}

export const summarizeComponent = defineComponent({
  name: NAME,
  kind: 'offload',
  gates: SUMMARIZE_GATES,
  options: decode,
  create,
});
