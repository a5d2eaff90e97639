// collapse: the content-agnostic last resort for an oversized tool output. Keep head_lines and
// tail_lines, replace the middle by one line naming exactly how many lines were hidden plus a
// marker, stash the original, and freeze the result so later turns replay the same bytes.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type ComponentOutcome, type Ctx, type Message } from '../component';
import { MarkerModeOption, NonNegInt } from '../shared/common-options';
import { HINT_FULL_OUTPUT, contentKey, hasPlaceholder, withToken } from '../shared/marker';
import { toolOutputs } from '../shared/message-text';
import { commitOffload, Gates, OffloadTally, replayFrozen, rewritableText, tailAllows } from '../shared/offload';
import { decodeOptions } from '../shared/options';
import { countTokens } from '../shared/tokens';

const NAME = 'collapse';

const CollapseOptions = Type.Object({
  max_tokens: NonNegInt(2000),
  head_lines: NonNegInt(20),
  tail_lines: NonNegInt(20),
  marker_mode: MarkerModeOption,
  cold_cache: Type.Boolean({ default: false }),
});

const COLLAPSE_GATES = [
  'non_text_blocks',
  'below_max_tokens',
  'marker_or_kept_verbatim',
  'too_few_lines',
  'cached_prefix',
  'marker_no_win',
] as const;

type Options = ReturnType<typeof decode>;
const decode = (raw: unknown, path: string) => decodeOptions(CollapseOptions, raw, path);

/**
 * Lines of `text`, with a final newline treated as a terminator rather than an extra empty line,
 * so "K lines omitted" counts what `wc -l` would. `terminated` restores it after the tail.
 */
function splitLines(text: string): { lines: string[]; terminated: boolean } {
  const terminated = text.endsWith('\n');
  const body = terminated ? text.slice(0, -1) : text;
  return { lines: body.split('\n'), terminated };
}

/**
 * The window text for a marker token ('' in marker_mode off); null when nothing would be hidden.
 * @internal exported for tests
 */
export function collapseText(text: string, head: number, tail: number, token: string): string | null {
  const split = splitLines(text);
  return split.lines.length > head + tail ? collapseLines(split, head, tail, token) : null;
}

/** collapseText for lines already split and known to be more than head + tail. */
function collapseLines({ lines, terminated }: ReturnType<typeof splitLines>, head: number, tail: number, token: string): string {
  const omitted = lines.length - head - tail;
  const note = `... (${omitted} lines omitted)`;
  const middle = withToken(note, token);
  const out = [...lines.slice(0, head), middle, ...lines.slice(lines.length - tail)].join('\n');
  return terminated ? `${out}\n` : out;
}

function create(o: Options): Component {
  return {
    name: NAME,
    kind: 'offload',
    run(messages: Message[], ctx: Ctx): ComponentOutcome {
      const gates = new Gates();
      const tally = new OffloadTally();
      for (const { i, m } of toolOutputs(messages)) {
        const text = rewritableText(m, gates);
        if (text === null) continue;
        // Replay first and regardless of depth: the provider may have cached these exact bytes.
        const replay = replayFrozen(NAME, m, text, ctx, i);
        if (replay.kind === 'replayed') {
          tally.record(replay);
          continue;
        }
        if (countTokens(text) <= o.max_tokens) {
          gates.add('below_max_tokens');
          continue;
        }
        if (replay.kind === 'kept' || hasPlaceholder(text)) {
          gates.add('marker_or_kept_verbatim');
          continue;
        }
        const split = splitLines(text);
        if (split.lines.length <= o.head_lines + o.tail_lines) {
          gates.add('too_few_lines');
          continue;
        }
        const lost = ctx.state.frozenLost(NAME, contentKey(text));
        if (!tailAllows(i, ctx, o.cold_cache, lost, m)) {
          gates.add('cached_prefix');
          continue;
        }
        const build = (token: string) => collapseLines(split, o.head_lines, o.tail_lines, token);
        const r = commitOffload(m, text, build, ctx, o.marker_mode, HINT_FULL_OUTPUT, NAME);
        if (r.ok) tally.record(r);
        else gates.add('marker_no_win');
      }
      return { keys: tally.keys, irreversible: tally.irreversible, gates: gates.counts };
    },
  };
}

export const collapseComponent = defineComponent({ name: NAME, kind: 'offload', gates: COLLAPSE_GATES, options: decode, create });
