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
  if (Array.isArray(a) && Array.isArray(b)) return sameElements(a, b, depth);
  return sameMembers(a as Record<string, unknown>, b as Record<string, unknown>, depth);
}

// Plain loops, no key arrays: the pipeline compares every message after every component.
function sameElements(a: readonly unknown[], b: readonly unknown[], depth: number): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i], depth + 1)) return false;
  return true;
}

function sameMembers(a: Record<string, unknown>, b: Record<string, unknown>, depth: number): boolean {
  let defined = 0;
  for (const k in a) {
    if (!Object.hasOwn(a, k) || a[k] === undefined) continue;
    if (!Object.hasOwn(b, k) || !deepEqual(a[k], b[k], depth + 1)) return false;
    defined++;
  }
  for (const k in b) if (Object.hasOwn(b, k) && b[k] !== undefined) defined--;
  return defined === 0;
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
