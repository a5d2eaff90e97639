// The one notion of "the same message", used by the pipeline (what a component changed), the
// encoder (what to write back) and the turn cache (which previous bytes to reuse). Two functions
// with different answers let the turn cache reuse bytes the encoder would have rewritten.
import type { Message } from '../component';
import { MAX_JSON_DEPTH } from './json-text';

/**
 * Structural equality of JSON values; a key whose value is undefined counts as absent. Bounded
 * recursion: requests are refused deeper than MAX_JSON_DEPTH, so deeper is "differs".
 */
export function deepEqual(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (depth > MAX_JSON_DEPTH) return false;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i], depth + 1));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(rb, k) && deepEqual(ra[k], rb[k], depth + 1));
}

/** Everything but `content`. */
export function sameEnvelope(a: Message, b: Message): boolean {
  return (
    a.role === b.role && a.tool_call_id === b.tool_call_id && a.name === b.name && deepEqual(a.tool_calls ?? null, b.tool_calls ?? null)
  );
}

export function sameMessage(a: Message | undefined, b: Message | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  return sameEnvelope(a, b) && deepEqual(a.content, b.content);
}
