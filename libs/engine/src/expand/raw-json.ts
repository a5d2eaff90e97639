// Position-preserving access to raw JSON for the expand loop, over the wire layer's scanner: the
// continuation is spliced into the client's bytes instead of re-serialising the request. Inputs
// were parsed already; anything the scanner rejects answers null.
import { skipValue, skipWs, spanAt, type Span } from '../wire/json-scan';

export type { Span };
export type PathStep = string | number;

/** The span of the JSON value starting at (or after whitespace from) offset i, or null. */
export function valueAt(raw: string, i: number): Span | null {
  try {
    const start = skipWs(raw, i);
    if (start >= raw.length) return null;
    const end = skipValue(raw, start);
    return end > start ? { start, end } : null;
  } catch {
    return null;
  }
}

/** The raw span of the value at `path` (object keys / array indices), or null. */
export function locate(raw: string, path: readonly PathStep[]): Span | null {
  const root = valueAt(raw, 0);
  if (!root) return null;
  try {
    return spanAt(raw, root, path) ?? null;
  } catch {
    return null;
  }
}

/**
 * Appends already-serialised JSON items to the array at `path`, right after its last element (so
 * whitespace before `]` stays put); every other byte of `raw` is kept. Null when the path is
 * missing or not an array.
 */
export function appendToArray(raw: string, path: readonly PathStep[], items: readonly string[]): string | null {
  const span = locate(raw, path);
  if (!span || raw[span.start] !== '[' || items.length === 0) return null;
  let last = span.end - 2;
  while (last > span.start && ' \n\r\t'.includes(raw.charAt(last))) last--;
  const empty = last === span.start;
  const at = last + 1;
  return `${raw.slice(0, at)}${empty ? '' : ','}${items.join(',')}${raw.slice(at)}`;
}
