// mask: age-based garbage collection. The newest keep_recent tool outputs stay verbatim; older
// ones (≥ min_tokens) become a one-line head-peek + marker, the original stashed. With
// read_min_tokens, a large output the model has already answered goes the same way at once. Every message it
// passes over is counted under a named gate, so "acted: 0" always has a reason.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type Message, type Ctx, type ComponentOutcome } from '../component';
import { MarkerModeOption, NonNegInt } from '../shared/common-options';
import { HINT_FULL_OUTPUT, contentKey, headPeek, markerIds, withToken } from '../shared/marker';
import { messageText, toolOutputs } from '../shared/message-text';
import { commitOffload, Gates, OffloadTally, rewritableText, settledByReplay, tailAllows } from '../shared/offload';
import { decodeOptions } from '../shared/options';
import { countTokens } from '../shared/tokens';

const NAME = 'mask';

const MaskOptions = Type.Object({
  keep_recent: NonNegInt(3),
  min_tokens: NonNegInt(100),
  keep_head_chars: NonNegInt(96),
  marker_mode: MarkerModeOption,
  cold_cache: Type.Boolean({ default: false }),
  // 0: off. An output at least this large that the model has already answered is masked even
  // among the keep_recent newest: it was read once, and every later turn would re-read it.
  read_min_tokens: NonNegInt(0),
});

const MASK_GATES = [
  'within_keep_recent',
  'below_min_tokens',
  'marker_or_kept_verbatim',
  'cached_prefix',
  'non_text_blocks',
  'marker_no_win',
] as const;

type Options = ReturnType<typeof decode>;
const decode = (raw: unknown, path: string) => decodeOptions(MaskOptions, raw, path);

function maskText(peek: string, token: string): string {
  const head = peek ? `[older tool output masked; starts: ${peek}]` : '[older tool output masked]';
  return withToken(head, token);
}

/** An unanswered output this run leaves that the next one masks once answered: large, plain text, no marker yet. */
function nextReadOnce(m: Message, min: number): boolean {
  const text = messageText(m);
  return text !== null && markerIds(text).length === 0 && countTokens(text) >= min;
}

function create(o: Options): Component {
  return {
    name: NAME,
    kind: 'offload',
    run(messages: Message[], ctx: Ctx): ComponentOutcome {
      const gates = new Gates();
      const tally = new OffloadTally();
      const tools = toolOutputs(messages);
      const older = Math.max(0, tools.length - o.keep_recent);
      const answered = o.read_min_tokens > 0 ? messages.findLastIndex((m) => m.role === 'assistant') : -1;
      const readOnceNext: number[] = [];
      for (const [k, { i, m }] of tools.entries()) {
        const readOnce = k >= older && i < answered;
        if (k >= older && !readOnce) {
          if (o.read_min_tokens > 0 && i > answered && nextReadOnce(m, o.read_min_tokens)) readOnceNext.push(i);
          // Counted only when nothing is older (as docs/components/mask.md documents the gate).
          if (older === 0) gates.add('within_keep_recent');
          continue;
        }
        const text = rewritableText(m, gates);
        if (text === null) continue;
        if (settledByReplay(NAME, m, text, ctx, gates, tally, i)) continue;
        if (readOnce && countTokens(text) < o.read_min_tokens) {
          gates.add('within_keep_recent');
          continue;
        }
        if (countTokens(text) < o.min_tokens) {
          gates.add('below_min_tokens');
          continue;
        }
        const lost = ctx.state.frozenLost(NAME, contentKey(text));
        if (!tailAllows(i, ctx, o.cold_cache, lost, m)) {
          gates.add('cached_prefix');
          continue;
        }
        const peek = headPeek(text, o.keep_head_chars);
        const r = commitOffload(m, text, (token) => maskText(peek, token), ctx, o.marker_mode, HINT_FULL_OUTPUT, NAME);
        if (r.ok) tally.record(r);
        else gates.add('marker_no_win');
      }
      return { keys: tally.keys, irreversible: tally.irreversible, gates: gates.counts, ...(readOnceNext.length && { readOnceNext }) };
    },
  };
}

export const maskComponent = defineComponent({ name: NAME, kind: 'offload', gates: MASK_GATES, options: decode, create });
