// toon: a JSON array of uniform, flat objects becomes TOON (one header naming the fields once, one
// comma-separated row per element). Lossless by check, not by hope: the TOON is decoded again with
// the reference decoder and adopted only if it yields the same value (null read back as "", the one
// documented simplification) and has strictly fewer tokens than the compact JSON would.
import { Type } from '@sinclair/typebox';
import { decode as toonDecode, encode as toonEncode, rawString, type JsonValue } from '@toon-format/toon';
import { defineComponent, type Component, type ComponentOutcome, type Ctx, type Message } from '../component';
import { NonNegInt } from '../shared/common-options';
import { sameList } from '../shared/same-list';
import { hasInexactNumbers } from '../shared/json-scan';
import { setText, toolOutputs } from '../shared/message-text';
import { Gates, rewritableText } from '../shared/offload';
import { decodeOptions } from '../shared/options';
import { textMemo } from '../shared/text-memo';
import { countTokens } from '../shared/tokens';

const NAME = 'toon';

const ToonOptions = Type.Object({
  min_tokens: NonNegInt(50),
});

const TOON_GATES = [
  'non_text_blocks',
  'not_json_shaped',
  'below_min_tokens',
  'json_parse_failed',
  'not_uniform_object_array',
  'round_trip_mismatch',
  'already_dense',
] as const;

type Options = ReturnType<typeof decode>;
const decode = (raw: unknown, path: string) => decodeOptions(ToonOptions, raw, path);

type Row = Record<string, string | number | boolean | null>;

function isScalar(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** Non-empty array of objects sharing one non-empty key set, every value a scalar. */
function isUniformFlatArray(value: unknown): value is Row[] {
  if (!Array.isArray(value) || value.length === 0) return false;
  let keys: string[] | undefined;
  for (const item of value) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
    const own = Object.keys(item).sort();
    if (own.length === 0) return false;
    if (!keys) keys = own;
    else if (!sameList(own, keys)) return false;
    if (!Object.values(item).every(isScalar)) return false;
  }
  return true;
}

/**
 * Encodes with the reference encoder. Two choices on top of it, both from docs/components/toon.md:
 * JSON null becomes an empty cell (a null cell otherwise costs a token per row), and rows carry no
 * indentation (the spec's two spaces cost about two tokens per row and tell the model nothing).
 * @internal exported for tests
 */
export function encodeToon(rows: readonly Row[]): string {
  return toonEncode(rows, {
    indentSize: 0,
    replacer: (_key, value, path) => (value === null && path.length === 2 ? rawString('') : value),
  });
}

/**
 * Decodes what encodeToon wrote with the reference decoder. Every row is exactly one line (the
 * encoder escapes newlines inside strings), so restoring the spec's indentation on the row lines
 * is exact and lets the reference decoder check our output strictly.
 * @internal exported for tests
 */
export function decodeToon(text: string): JsonValue {
  const [header, ...rows] = text.split('\n');
  return toonDecode([header, ...rows.map((r) => `  ${r}`)].join('\n'));
}

/** The value a faithful TOON must decode to: each null cell reads back as "". */
function expectedAfterDecode(rows: readonly Row[]): Row[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? '' : v])));
}

function sameRows(a: JsonValue, b: readonly Row[]): boolean {
  if (!Array.isArray(a) || a.length !== b.length) return false;
  return b.every((row, i) => {
    const got = a[i];
    if (typeof got !== 'object' || got === null || Array.isArray(got)) return false;
    const keys = Object.keys(row);
    if (Object.keys(got).length !== keys.length) return false;
    return keys.every((k) => (got as Record<string, unknown>)[k] === row[k]);
  });
}

type Verdict = { ok: true; text: string } | { ok: false; gate: (typeof TOON_GATES)[number] };

// Parsing, encoding and decoding are pure functions of the text: done once per distinct output.
const verdictFor = textMemo((text: string) => encodeVerdict(text.trim(), countTokens(text)), 16 * 1024 * 1024);

/** @internal exported for tests */
export function toonFor(text: string, minTokens: number): Verdict {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[') && !trimmed.startsWith('{')) return { ok: false, gate: 'not_json_shaped' };
  if (countTokens(text) < minTokens) return { ok: false, gate: 'below_min_tokens' };
  return verdictFor(text);
}

function encodeVerdict(trimmed: string, tokens: number): Verdict {
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return { ok: false, gate: 'json_parse_failed' };
  }
  if (!isUniformFlatArray(value)) return { ok: false, gate: 'not_uniform_object_array' };
  // A literal JS numbers cannot hold (a 64-bit id) would be re-encoded as a different number.
  if (hasInexactNumbers(trimmed)) return { ok: false, gate: 'round_trip_mismatch' };
  let toon: string;
  try {
    toon = encodeToon(value);
    if (!sameRows(decodeToon(toon), expectedAfterDecode(value))) return { ok: false, gate: 'round_trip_mismatch' };
  } catch {
    return { ok: false, gate: 'round_trip_mismatch' };
  }
  // Measured against compact JSON, not the (maybe pretty) input: whitespace alone is format's job.
  if (countTokens(toon) >= Math.min(tokens, countTokens(JSON.stringify(value)))) return { ok: false, gate: 'already_dense' };
  return { ok: true, text: toon };
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
        const verdict = toonFor(text, o.min_tokens);
        if (verdict.ok) setText(m, verdict.text);
        else gates.add(verdict.gate);
      }
      return { gates: gates.counts };
    },
  };
}

export const toonComponent = defineComponent({ name: NAME, kind: 'reformat', gates: TOON_GATES, options: decode, create });
