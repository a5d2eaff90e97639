// The deletion-only proof: a model-written filter's result is accepted only if it can be obtained
// from the input by deleting characters (in-order subsequence), or — for a JSON body — by dropping
// keys and array elements (structural containment, re-serialization allowed). Either way the model
// can trim anything but cannot fabricate, reorder or reword a single value.
//
// A bare character subsequence is a weak proof against a long input: almost any short sentence can
// be spelled by picking letters from a 15 KB log. So every word the result keeps must also be one
// contiguous run of the input (a word may be cut short, never assembled from scattered letters);
// only whitespace and punctuation are matched character by character.

import { MAX_JSON_DEPTH } from '../../shared/json-text';

/** Words (letters, digits, underscore) and single other characters, in order. */
const PIECES = /[\p{L}\p{N}_]+|[^\p{L}\p{N}_]/gsu;

/**
 * Is `out` obtainable from `input` by deleting characters such that each kept word is a contiguous
 * run of the input? Greedy earliest-end matching of the pieces is optimal.
 */
function isWordwiseSubsequence(out: string, input: string): boolean {
  if (out.length > input.length) return false;
  let j = 0;
  for (const m of out.matchAll(PIECES)) {
    const at = input.indexOf(m[0], j);
    if (at < 0) return false;
    j = at + m[0].length;
  }
  return true;
}

/**
 * Is the JSON value `out` contained in `input`: objects keep a subset of keys (each value
 * contained), arrays keep an in-order sub-list (each element contained), scalars are equal.
 * @internal exported for tests
 */
export function jsonContained(out: unknown, input: unknown, depth = 0): boolean {
  // The recursion is bounded: a value nested deeper than any request may be is never accepted.
  if (depth > MAX_JSON_DEPTH) return false;
  if (Array.isArray(out)) {
    if (!Array.isArray(input)) return false;
    let j = 0;
    for (const item of out) {
      while (j < input.length && !jsonContained(item, input[j], depth + 1)) j++;
      if (j === input.length) return false;
      j++;
    }
    return true;
  }
  if (typeof out === 'object' && out !== null) {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return false;
    const src = input as Record<string, unknown>;
    return Object.entries(out).every(([k, v]) => Object.hasOwn(src, k) && jsonContained(v, src[k], depth + 1));
  }
  return out === input;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const t = text.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch {
    return { ok: false };
  }
}

/** The acceptance test for `rewrite: false`. */
export function isDeletionOnly(out: string, input: string): boolean {
  if (isWordwiseSubsequence(out, input)) return true;
  const a = parseJson(input);
  if (!a.ok) return false;
  const b = parseJson(out);
  return b.ok && jsonContained(b.value, a.value);
}
