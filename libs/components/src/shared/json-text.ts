// A position walk over JSON text that JSON.parse already accepted, building nothing: string
// contents are jumped over with indexOf, so each byte is looked at at most once. Spans are
// [start, end) in UTF-16 code units. Shared by the gateway's wire layer and the components that
// keep a JSON value's original bytes.

export interface Span {
  start: number;
  end: number;
}

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_OBJ = 0x7b;
export const CLOSE_OBJ = 0x7d;
export const OPEN_ARR = 0x5b;
export const CLOSE_ARR = 0x5d;
export const COMMA = 0x2c;

export function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function skipWs(raw: string, i: number): number {
  while (i < raw.length && isWs(raw.charCodeAt(i))) i++;
  return i;
}

/** `i` is at the opening quote; returns the index just past the closing quote. */
export function skipString(raw: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = raw.indexOf('"', from);
    if (q < 0) throw new Error(`unterminated string at ${i}`);
    // A quote is escaped only by an odd run of backslashes right before it.
    let b = q - 1;
    while (raw.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** Nesting deeper than this is refused at the door: no walk over a request ever goes deeper. */
export const MAX_JSON_DEPTH = 128;

/**
 * Where the text from `from` on first nests deeper than `limit` containers (relative to `from`),
 * or -1. Iterative, one look at each byte outside strings; strings are jumped over.
 */
export function depthViolation(raw: string, from = 0, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  const n = raw.length;
  for (let j = from; j < n; j++) {
    const d = raw.charCodeAt(j);
    if (d === QUOTE) j = skipString(raw, j) - 1;
    else if (d === OPEN_OBJ || d === OPEN_ARR) {
      if (++depth > limit) return j;
    } else if (d === CLOSE_OBJ || d === CLOSE_ARR) depth--;
  }
  return -1;
}

/** `i` is at the first character of a value; returns the index just past it. */
export function skipValue(raw: string, i: number): number {
  const c = raw.charCodeAt(i);
  if (c === QUOTE) return skipString(raw, i);
  if (c === OPEN_OBJ || c === OPEN_ARR) {
    let depth = 0;
    let j = i;
    const n = raw.length;
    while (j < n) {
      const d = raw.charCodeAt(j);
      if (d === QUOTE) {
        j = skipString(raw, j);
        continue;
      }
      if (d === OPEN_OBJ || d === OPEN_ARR) depth++;
      else if (d === CLOSE_OBJ || d === CLOSE_ARR) {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    throw new Error(`unterminated container at ${i}`);
  }
  // number, true, false, null
  let j = i;
  while (j < raw.length) {
    const d = raw.charCodeAt(j);
    if (d === COMMA || d === CLOSE_OBJ || d === CLOSE_ARR || isWs(d)) break;
    j++;
  }
  return j;
}

/** Elements of the array starting at `at` ('['). */
export function elements(raw: string, at: number): Span[] {
  if (raw.charCodeAt(at) !== OPEN_ARR) throw new Error(`no array at ${at}`);
  const out: Span[] = [];
  let i = skipWs(raw, at + 1);
  if (raw.charCodeAt(i) === CLOSE_ARR) return out;
  for (;;) {
    // Only a text cut short gets here (JSON.parse accepted the whole): fail rather than loop.
    if (i >= raw.length) throw new Error(`unterminated array at ${at}`);
    const end = skipValue(raw, i);
    out.push({ start: i, end });
    i = skipWs(raw, end);
    if (raw.charCodeAt(i) === CLOSE_ARR) return out;
    i = skipWs(raw, i + 1);
  }
}
