// format: a pretty-printed JSON tool output becomes compact JSON whose strings and numbers are the
// original bytes, in the original key order. Lossless by construction: only whitespace outside
// strings is removed, and only after JSON.parse proved the text is exactly one JSON document.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type ComponentOutcome, type Ctx, type Message } from '../component';
import { NonNegInt } from '../shared/common-options';
import { setText, toolOutputs } from '../shared/message-text';
import { Gates, rewritableText } from '../shared/offload';
import { QUOTE, isWs, skipString, skipValue, skipWs } from '../shared/json-text';
import { decodeOptions } from '../shared/options';
import { textMemo } from '../shared/text-memo';
import { countTokens } from '../shared/tokens';

const NAME = 'format';

const FormatOptions = Type.Object({
  min_tokens: NonNegInt(50),
});

const FORMAT_GATES = [
  'non_text_blocks',
  'not_json_shaped',
  'below_min_tokens',
  'json_parse_failed',
  'envelope_not_object',
  'envelope_no_embedded_json',
  'envelope_inner_not_smaller',
  'already_compact',
] as const;

type Options = ReturnType<typeof decode>;
const decode = (raw: unknown, path: string) => decodeOptions(FormatOptions, raw, path);

/** String fields shorter than this (quotes included) are never tried as embedded JSON. */
const MIN_EMBEDDED_CHARS = 64;

/**
 * The compact form of `text`, or null unless it is exactly one JSON document. Numbers are never
 * re-printed (12345678901234567890 and 1.0 survive as written), which a parse/stringify round
 * trip through JS numbers would not guarantee; key order and string escapes are kept too.
 * @internal exported for tests
 */
export function compactJson(text: string): string | null {
  try {
    JSON.parse(text);
  } catch {
    return null;
  }
  const parts: string[] = [];
  let runStart = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = skipString(text, i);
      continue;
    }
    if (isWs(c)) {
      if (i > runStart) parts.push(text.slice(runStart, i));
      i = skipWs(text, i);
      runStart = i;
      continue;
    }
    i++;
  }
  if (runStart < text.length) parts.push(text.slice(runStart));
  return parts.join('');
}

type Descent = { text: string } | { gate: string };

/**
 * Tool runners often wrap the real payload as a JSON-escaped string inside an envelope object
 * ({"ok":true,"stdout":"{\n  \"items\": …"}), where compacting only the envelope wins nothing.
 * Descend one level: every top-level string field that itself holds JSON is compacted in place
 * when that makes the field shorter; everything else is re-emitted byte-exact.
 */
function descendEnvelope(compact: string): Descent {
  if (compact[0] !== '{') return { gate: 'envelope_not_object' };
  const parts: string[] = [];
  let copied = 0;
  let found = false;
  let acted = false;
  let i = 1;
  while (i < compact.length && compact[i] !== '}') {
    const valueStart = skipString(compact, i) + 1; // key, then ':'
    const valueEnd = skipValue(compact, valueStart);
    const raw = compact.slice(valueStart, valueEnd);
    if (raw.startsWith('"') && raw.length >= MIN_EMBEDDED_CHARS) {
      const inner = JSON.parse(raw) as string;
      const head = inner.trimStart()[0];
      const innerCompact = head === '{' || head === '[' ? compactJson(inner) : null;
      if (innerCompact !== null) {
        found = true;
        const replacement = JSON.stringify(innerCompact);
        if (replacement.length < raw.length) {
          parts.push(compact.slice(copied, valueStart), replacement);
          copied = valueEnd;
          acted = true;
        }
      }
    }
    i = compact[valueEnd] === ',' ? valueEnd + 1 : valueEnd;
  }
  if (!acted) return { gate: found ? 'envelope_inner_not_smaller' : 'envelope_no_embedded_json' };
  parts.push(compact.slice(copied));
  return { text: parts.join('') };
}

function create(o: Options): Component {
  return {
    name: NAME,
    kind: 'reformat',
    run(messages: Message[], _ctx: Ctx): ComponentOutcome {
      const gates = new Gates();
      for (const { m } of toolOutputs(messages)) {
        const text = rewritableText(m, gates);
        if (text === null) continue;
        const head = text.trimStart()[0];
        if (head !== '{' && head !== '[') {
          gates.add('not_json_shaped');
          continue;
        }
        const before = countTokens(text);
        if (before < o.min_tokens) {
          gates.add('below_min_tokens');
          continue;
        }
        const compact = compactMemo(text);
        if (compact === null) {
          gates.add('json_parse_failed');
          continue;
        }
        const descent = descentMemo(compact);
        let best = compact;
        if ('text' in descent && countTokens(descent.text) <= countTokens(compact)) best = descent.text;
        if (countTokens(best) >= before) {
          // The envelope reason says why nothing deeper could shrink either.
          gates.add('gate' in descent ? descent.gate : 'already_compact');
          continue;
        }
        setText(m, best);
      }
      return { gates: gates.counts };
    },
  };
}

// Every turn re-sends the same outputs: compact each distinct text once per process.
const compactMemo = textMemo(compactJson);
const descentMemo = textMemo((compact: string) => descendEnvelope(compact));

export const formatComponent = defineComponent({ name: NAME, kind: 'reformat', gates: FORMAT_GATES, options: decode, create });
