// dedup: within one request, a tool output byte-identical to an earlier one becomes a pointer +
// marker; the first copy always stays verbatim. The decision is a pure function of the request's
// own messages, so every turn re-derives the same bytes: no freeze and no tail gate are needed.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type ComponentOutcome, type Ctx, type Message } from '../component';
import { MarkerModeOption, NonNegInt } from '../shared/common-options';
import { withToken } from '../shared/marker';
import { toolOutputs } from '../shared/message-text';
import { commitOffload, Gates, OffloadTally, rewritableText, markedOrKept } from '../shared/offload';
import { decodeOptions } from '../shared/options';
import { countTokens } from '../shared/tokens';

const NAME = 'dedup';

const DedupOptions = Type.Object({
  min_tokens: NonNegInt(100),
  marker_mode: MarkerModeOption,
});

const DEDUP_GATES = [
  'non_text_blocks',
  'below_min_tokens',
  'marker_or_kept_verbatim',
  'no_earlier_identical_output',
  'marker_no_win',
] as const;

type Options = ReturnType<typeof decode>;
const decode = (raw: unknown, path: string) => decodeOptions(DedupOptions, raw, path);

const POINTER = '[identical to an earlier tool output]';

function dedupText(token: string): string {
  return withToken(POINTER, token);
}

function create(o: Options): Component {
  return {
    name: NAME,
    kind: 'offload',
    run(messages: Message[], ctx: Ctx): ComponentOutcome {
      const gates = new Gates();
      const tally = new OffloadTally();
      // Keyed by the exact text, not a hash of it: "identical" means byte-identical, no collisions.
      const seen = new Set<string>();
      for (const { i, m } of toolOutputs(messages)) {
        const text = rewritableText(m, gates);
        if (text === null) continue;
        if (countTokens(text) < o.min_tokens) {
          gates.add('below_min_tokens');
          continue;
        }
        if (markedOrKept(text, ctx, i)) {
          gates.add('marker_or_kept_verbatim');
          continue;
        }
        if (!seen.has(text)) {
          seen.add(text);
          gates.add('no_earlier_identical_output');
          continue;
        }
        // No hint: the earlier copy is right there in the transcript; the marker is a fallback.
        const r = commitOffload(m, text, dedupText, ctx, o.marker_mode, '');
        if (r.ok) tally.record(r);
        else gates.add('marker_no_win');
      }
      return { keys: tally.keys, irreversible: tally.irreversible, gates: gates.counts };
    },
  };
}

export const dedupComponent = defineComponent({ name: NAME, kind: 'offload', gates: DEDUP_GATES, options: decode, create });
