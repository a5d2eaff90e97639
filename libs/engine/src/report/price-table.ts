// What a provider bills per token, per model family. Defaults are list prices in USD per million
// tokens as published by Anthropic, OpenAI and Google when this table was written; an operator overrides
// or extends them with PRICE_TABLE (a YAML/JSON document) — a price is configuration, not code.
// A model no entry matches is priced by its dialect's default family and reported under that name,
// so a dashboard never shows $0 for traffic it merely failed to recognise.
import { existsSync, readFileSync } from 'node:fs';
import { providerFamily, type Dialect } from '@context-guru/components';

type Family = ReturnType<typeof providerFamily>;
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import type { EnvProblem } from '../env/env-errors';

/** USD per million tokens. */
export interface FamilyPrice {
  family: string;
  /**
   * Case-insensitive prefixes of the model id, also tried after a `/`, `.` or `:` (router and cloud
   * ids such as `anthropic/claude-…`, `anthropic.claude-…`); the first entry with a match wins.
   */
  match: string[];
  input: number;
  cache_write: number;
  cache_read: number;
  output: number;
}

const M = (family: string, match: string[], input: number, cache_write: number, cache_read: number, output: number): FamilyPrice => ({
  family,
  match,
  input,
  cache_write,
  cache_read,
  output,
});

/** Anthropic: 5-minute cache writes at 1.25× input, reads at 0.1×. More specific entries first. */
const ANTHROPIC: FamilyPrice[] = [
  M('claude-opus-4.5+', ['claude-opus-4-5', 'claude-opus-4-6', 'claude-opus-4-7', 'claude-opus-4.5', 'claude-opus-4.6'], 5, 6.25, 0.5, 25),
  M('claude-opus-4', ['claude-opus-4', 'claude-4-opus', 'claude-3-opus'], 15, 18.75, 1.5, 75),
  M('claude-sonnet', ['claude-sonnet', 'claude-4-sonnet', 'claude-3-7-sonnet', 'claude-3-5-sonnet'], 3, 3.75, 0.3, 15),
  M('claude-haiku-4.5', ['claude-haiku-4'], 1, 1.25, 0.1, 5),
  M('claude-haiku-3.5', ['claude-3-5-haiku'], 0.8, 1, 0.08, 4),
  M('claude-haiku-3', ['claude-3-haiku'], 0.25, 0.3, 0.03, 1.25),
];

/** OpenAI: automatic caching, writes billed as plain input, cached reads discounted. */
const OPENAI: FamilyPrice[] = [
  M('gpt-5-nano', ['gpt-5-nano', 'gpt-5.1-nano'], 0.05, 0.05, 0.005, 0.4),
  M('gpt-5-mini', ['gpt-5-mini', 'gpt-5.1-mini'], 0.25, 0.25, 0.025, 2),
  M('gpt-5', ['gpt-5'], 1.25, 1.25, 0.125, 10),
  M('gpt-4.1-nano', ['gpt-4.1-nano'], 0.1, 0.1, 0.025, 0.4),
  M('gpt-4.1-mini', ['gpt-4.1-mini'], 0.4, 0.4, 0.1, 1.6),
  M('gpt-4.1', ['gpt-4.1'], 2, 2, 0.5, 8),
  M('gpt-4o-mini', ['gpt-4o-mini'], 0.15, 0.15, 0.075, 0.6),
  M('gpt-4o', ['gpt-4o'], 2.5, 2.5, 1.25, 10),
  M('o4-mini', ['o4-mini'], 1.1, 1.1, 0.275, 4.4),
  M('o3-mini', ['o3-mini'], 1.1, 1.1, 0.55, 4.4),
  M('o3', ['o3'], 2, 2, 0.5, 8),
  M('o1', ['o1'], 15, 15, 7.5, 60),
];

/**
 * Gemini (prompts up to 200k tokens): implicit caching bills no write, and cached input at the
 * published cache rate. Output includes thinking tokens.
 */
const GEMINI: FamilyPrice[] = [
  M('gemini-3-pro', ['gemini-3-pro', 'gemini-3.0-pro'], 2, 2, 0.2, 12),
  M('gemini-2.5-pro', ['gemini-2.5-pro'], 1.25, 1.25, 0.125, 10),
  M('gemini-2.5-flash-lite', ['gemini-2.5-flash-lite'], 0.1, 0.1, 0.01, 0.4),
  M('gemini-2.5-flash', ['gemini-2.5-flash'], 0.3, 0.3, 0.03, 2.5),
  M('gemini-2.0-flash-lite', ['gemini-2.0-flash-lite'], 0.075, 0.075, 0.075, 0.3),
  M('gemini-2.0-flash', ['gemini-2.0-flash'], 0.1, 0.1, 0.025, 0.4),
];

/** Unrecognised models: the dialect's mainstream family, under a name that says it was a guess. */
const FALLBACK: Record<Family, FamilyPrice> = {
  anthropic: M('anthropic-default', [], 3, 3.75, 0.3, 15),
  openai: M('openai-default', [], 2, 2, 0.5, 8),
  gemini: M('gemini-default', [], 1.25, 1.25, 0.125, 10),
};

const PriceEntry = Type.Object(
  {
    family: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._+:-]+$' }),
    match: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    input: Type.Number({ minimum: 0 }),
    cache_write: Type.Optional(Type.Number({ minimum: 0 })),
    cache_read: Type.Optional(Type.Number({ minimum: 0 })),
    output: Type.Number({ minimum: 0 }),
  },
  { additionalProperties: false },
);
const PriceDocument = Type.Object({ families: Type.Array(PriceEntry) }, { additionalProperties: false });
type PriceDocument = Static<typeof PriceDocument>;
/** What a PRICE_TABLE problem says the variable accepts. */
const PRICE_DOCUMENT_SHAPE =
  'families: [{family, match: [model id prefix, …], input, output, cache_write?, cache_read?}] in USD per million tokens, each ≥ 0';

export interface PriceTable {
  /** Rates for a model id (USD per million tokens); `model` may be unknown or empty. */
  lookup(dialect: Dialect, model: string | undefined): FamilyPrice;
  /** Every family name the table can report (a bounded label set). */
  families(): string[];
}

export function createPriceTable(overrides: readonly FamilyPrice[] = []): PriceTable {
  const names = new Set(overrides.map((o) => o.family));
  // An override named like a default replaces it; new families are tried before every default.
  const table: Record<Family, FamilyPrice[]> = {
    anthropic: [...overrides, ...ANTHROPIC.filter((p) => !names.has(p.family))],
    openai: [...overrides, ...OPENAI.filter((p) => !names.has(p.family))],
    gemini: [...overrides, ...GEMINI.filter((p) => !names.has(p.family))],
  };
  const memo = new Map<string, FamilyPrice>();
  return {
    lookup(wire, model) {
      const dialect = providerFamily(wire);
      const id = (model ?? '').toLowerCase();
      const key = `${dialect}\u0000${id}`;
      let hit = memo.get(key);
      if (!hit) {
        hit = table[dialect].find((p) => p.match.some((m) => matches(id, m.toLowerCase()))) ?? FALLBACK[dialect];
        if (memo.size < 1024) memo.set(key, hit);
      }
      return hit;
    },
    families() {
      const all = [...table.anthropic, ...table.openai, ...table.gemini, FALLBACK.anthropic, FALLBACK.openai, FALLBACK.gemini];
      return [...new Set(all.map((p) => p.family))];
    },
  };
}

function matches(id: string, prefix: string): boolean {
  if (id.startsWith(prefix)) return true;
  for (const sep of ['/', '.', ':']) if (id.includes(sep + prefix)) return true;
  return false;
}

class PriceTableError extends Error {}

/**
 * Parses PRICE_TABLE: `families: [{family, match: [..], input, output, cache_write?, cache_read?}]`.
 * @internal exported for tests
 */
export function parsePriceTable(text: string): FamilyPrice[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new PriceTableError(`not YAML or JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!Value.Check(PriceDocument, doc)) {
    const first = [...Value.Errors(PriceDocument, doc)][0];
    throw new PriceTableError(`${first?.path || '/'}: ${first?.message ?? 'invalid'}`);
  }
  return (doc as PriceDocument).families.map((f) => ({
    family: f.family,
    match: f.match,
    input: f.input,
    // Unset cache rates follow the input rate: no discount and no premium is the safe reading.
    cache_write: f.cache_write ?? f.input,
    cache_read: f.cache_read ?? f.input,
    output: f.output,
  }));
}

/** PRICE_TABLE for env.ts (a file path, or the document itself): problems are appended, the defaults stand in. */
export function readPriceTable(src: Record<string, string | undefined>, problems: EnvProblem[]): FamilyPrice[] {
  const value = src.PRICE_TABLE;
  if (!value) return [];
  try {
    const isFile = !value.includes('\n') && !value.trimStart().startsWith('{') && existsSync(value);
    return parsePriceTable(isFile ? readFileSync(value, 'utf8') : value);
  } catch (err) {
    problems.push({
      code: 'invalid_price_table',
      variable: 'PRICE_TABLE',
      message: `PRICE_TABLE: ${err instanceof Error ? err.message : String(err)}; expected ${PRICE_DOCUMENT_SHAPE}`,
    });
    return [];
  }
}
