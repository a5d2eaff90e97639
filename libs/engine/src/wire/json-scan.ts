// Positions of values inside a JSON text that JSON.parse already accepted, found without building
// anything: string contents are jumped over with indexOf, so each byte is looked at at most once.
// Every span is [start, end) in UTF-16 code units of the received string; keys are compared decoded
// and the LAST duplicate wins, exactly as JSON.parse resolves them.

import {
  CLOSE_ARR,
  CLOSE_OBJ,
  COMMA,
  OPEN_ARR,
  OPEN_OBJ,
  depthViolation,
  elements,
  MAX_JSON_DEPTH,
  skipString,
  skipValue,
  skipWs,
  type Span,
} from '@context-guru/components';

export { depthViolation, elements, MAX_JSON_DEPTH, skipValue, skipWs, type Span };

export interface Member {
  key: string;
  value: Span;
}

/** A member's key as JSON.parse reads it. */
export function decodeKey(raw: string, start: number, end: number): string {
  const inner = raw.slice(start + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(raw.slice(start, end)) as string) : inner;
}

/** Members of the object starting at `at` ('{'), in order, duplicates included. */
export function members(raw: string, at: number): Member[] {
  if (raw.charCodeAt(at) !== OPEN_OBJ) throw new Error(`no object at ${at}`);
  const out: Member[] = [];
  let i = skipWs(raw, at + 1);
  if (raw.charCodeAt(i) === CLOSE_OBJ) return out;
  for (;;) {
    if (i >= raw.length) throw new Error(`unterminated object at ${at}`);
    const keyEnd = skipString(raw, i);
    const key = decodeKey(raw, i, keyEnd);
    const start = skipWs(raw, skipWs(raw, keyEnd) + 1); // past ':'
    const end = skipValue(raw, start);
    out.push({ key, value: { start, end } });
    i = skipWs(raw, end);
    if (raw.charCodeAt(i) === CLOSE_OBJ) return out;
    i = skipWs(raw, i + 1); // past ','
  }
}

/** The value of the last member named `key` of the object at `at`, as JSON.parse would keep it. */
export function member(raw: string, at: number, key: string): Span | undefined {
  let found: Span | undefined;
  for (const m of members(raw, at)) if (m.key === key) found = m.value;
  return found;
}

/** The elements that follow the element ending at `end`, up to the array's closing bracket. */
export function elementsAfter(raw: string, end: number): Span[] {
  const out: Span[] = [];
  let i = skipWs(raw, end);
  while (raw.charCodeAt(i) === COMMA) {
    i = skipWs(raw, i + 1);
    const e = skipValue(raw, i);
    out.push({ start: i, end: e });
    i = skipWs(raw, e);
  }
  if (raw.charCodeAt(i) !== CLOSE_ARR) throw new Error(`expected , or ] at ${i}`);
  return out;
}

/** Element `k` of the array at `at`, walking only as far as needed. */
export function elementAt(raw: string, at: number, k: number): Span | undefined {
  if (raw.charCodeAt(at) !== OPEN_ARR) return undefined;
  let i = skipWs(raw, at + 1);
  if (raw.charCodeAt(i) === CLOSE_ARR) return undefined;
  for (let n = 0; ; n++) {
    if (i >= raw.length) throw new Error(`unterminated array at ${at}`);
    const end = skipValue(raw, i);
    if (n === k) return { start: i, end };
    i = skipWs(raw, end);
    if (raw.charCodeAt(i) === CLOSE_ARR) return undefined;
    i = skipWs(raw, i + 1);
  }
}

/** Walks a path of keys / indices from the value at `at`; undefined when any step is missing. */
export function spanAt(raw: string, at: Span, path: readonly (string | number)[]): Span | undefined {
  let cur: Span | undefined = at;
  for (const step of path) {
    if (!cur) return undefined;
    const c = raw.charCodeAt(cur.start);
    if (typeof step === 'string') cur = c === OPEN_OBJ ? member(raw, cur.start, step) : undefined;
    else cur = c === OPEN_ARR ? elementAt(raw, cur.start, step) : undefined;
  }
  return cur;
}
