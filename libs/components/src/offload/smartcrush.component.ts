// smartcrush: a long JSON array keeps its first and last items plus every item carrying an error
// signal, byte-for-byte as the tool sent them (sliced from the original text, never re-serialized),
// and says how many of how many items it shows. The full array is stashed behind a marker.
// A pure function of the content, so it needs neither a freeze nor the tail gate.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type ComponentOutcome, type Ctx, type Message } from '../component';
import { MarkerModeOption, NonNegInt } from '../shared/common-options';
import { EXPAND_TOOL_NAME, withToken } from '../shared/marker';
import { arrayItemSpans } from '../shared/json-scan';
import { toolOutputs } from '../shared/message-text';
import { commitOffload, Gates, OffloadTally, rewritableText, markedOrKept } from '../shared/offload';
import { decodeOptions } from '../shared/options';
import { textMemo } from '../shared/text-memo';
import { countTokens } from '../shared/tokens';

const NAME = 'smartcrush';

const SmartcrushOptions = Type.Object({
  min_items: NonNegInt(5),
  min_tokens: NonNegInt(200),
  keep_first: NonNegInt(3),
  keep_last: NonNegInt(2),
  marker_mode: MarkerModeOption,
});

const SMARTCRUSH_GATES = [
  'non_text_blocks',
  'marker_or_kept_verbatim',
  'not_json_array',
  'below_min_tokens',
  'below_min_items',
  'nothing_to_drop',
  'marker_no_win',
] as const;

type Options = ReturnType<typeof decode>;
const decode = (raw: unknown, path: string) => decodeOptions(SmartcrushOptions, raw, path);

const ERROR_SIGNAL = /error|fail|exception|panic|fatal|traceback/;

type Plan = { ok: true; items: string[]; total: number } | { ok: false; gate: (typeof SMARTCRUSH_GATES)[number] };

/** Which items of the array in `text` survive, as their original bytes. */
function crushPlan(text: string, o: Options): Plan {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[')) return { ok: false, gate: 'not_json_array' };
  if (countTokens(text) < o.min_tokens) return { ok: false, gate: 'below_min_tokens' };
  try {
    if (!Array.isArray(JSON.parse(trimmed))) return { ok: false, gate: 'not_json_array' };
  } catch {
    return { ok: false, gate: 'not_json_array' };
  }
  const spans = arrayItemSpans(trimmed);
  if (spans === null) return { ok: false, gate: 'not_json_array' };
  const n = spans.length;
  if (n < o.min_items) return { ok: false, gate: 'below_min_items' };
  const items: string[] = [];
  spans.forEach(([start, end], i) => {
    const raw = trimmed.slice(start, end);
    if (i < o.keep_first || i >= n - o.keep_last || ERROR_SIGNAL.test(raw.toLowerCase())) items.push(raw);
  });
  if (items.length === n) return { ok: false, gate: 'nothing_to_drop' };
  return { ok: true, items, total: n };
}

/**
 * `[kept,items] [K of N items shown; full array: call context_guru_expand] <<cg:HASH>>` — the
 * recovery hint sits inside the note, ahead of the marker, as docs/components/smartcrush.md shows it.
 * @internal exported for tests
 */
export function crushedText(items: readonly string[], total: number, token: string): string {
  const shown = `${items.length} of ${total} items shown`;
  const body = `[${items.join(',')}]`;
  if (token.startsWith('<<cg:')) return `${body} [${shown}; full array: call ${EXPAND_TOOL_NAME}] ${token}`;
  return withToken(`${body} [${shown}]`, token);
}

function create(o: Options): Component {
  // The plan is a pure function of the text (for these options): parse each distinct array once.
  const planFor = textMemo((text: string) => crushPlan(text, o), 16 * 1024 * 1024);
  return {
    name: NAME,
    kind: 'offload',
    run(messages: Message[], ctx: Ctx): ComponentOutcome {
      const gates = new Gates();
      const tally = new OffloadTally();
      for (const { i, m } of toolOutputs(messages)) {
        const text = rewritableText(m, gates);
        if (text === null) continue;
        if (markedOrKept(text, ctx, i)) {
          gates.add('marker_or_kept_verbatim');
          continue;
        }
        const plan = planFor(text);
        if (!plan.ok) {
          gates.add(plan.gate);
          continue;
        }
        const r = commitOffload(m, text, (token) => crushedText(plan.items, plan.total, token), ctx, o.marker_mode, '');
        if (r.ok) tally.record(r);
        else gates.add('marker_no_win');
      }
      return { keys: tally.keys, irreversible: tally.irreversible, gates: gates.counts };
    },
  };
}

export const smartcrushComponent = defineComponent({
  name: NAME,
  kind: 'offload',
  gates: SMARTCRUSH_GATES,
  options: decode,
  create,
});
