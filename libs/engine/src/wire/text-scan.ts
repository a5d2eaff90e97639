// The value-level scans of json-scan.ts over a BodyText. Each reads one JSON value (a message, a
// member of one, a top-level member other than `messages`), which lies inside one piece of the
// text (body-text.ts), so it runs on that piece as a plain string and its spans are shifted back.
// A scan that runs off its piece (a value that is not one of those) reads the whole text instead.
import type { BodyText } from './body-text';
import * as str from './json-scan';
import type { Member, Span } from './json-scan';

function shifted(s: Span, by: number): Span {
  return { start: s.start + by, end: s.end + by };
}

/** `scan` over the piece holding `at`, its result shifted back; over the whole text if it runs off the piece. */
function inPiece<T>(text: BodyText, at: number, scan: (raw: string, at: number) => T, shift: (v: T, by: number) => T): T {
  const { s, at: base } = text.local(at);
  if (base === 0 && s.length === text.length) return scan(s, at);
  try {
    return shift(scan(s, at - base), base);
  } catch {
    return scan(text.whole(), at);
  }
}

const spanOrNone = (v: Span | undefined, by: number) => v && shifted(v, by);
const spans = (v: Span[], by: number) => v.map((s) => shifted(s, by));

export function members(text: BodyText, at: number): Member[] {
  return inPiece(text, at, str.members, (v, by) => v.map((m) => ({ key: m.key, value: shifted(m.value, by) })));
}

export function member(text: BodyText, at: number, key: string): Span | undefined {
  return inPiece(text, at, (raw, i) => str.member(raw, i, key), spanOrNone);
}

export function elements(text: BodyText, at: number): Span[] {
  return inPiece(text, at, str.elements, spans);
}

export function elementAt(text: BodyText, at: number, k: number): Span | undefined {
  return inPiece(text, at, (raw, i) => str.elementAt(raw, i, k), spanOrNone);
}

export function spanAt(text: BodyText, at: Span, path: readonly (string | number)[]): Span | undefined {
  return inPiece(text, at.start, (raw, i) => str.spanAt(raw, { start: i, end: i + at.end - at.start }, path), spanOrNone);
}

/** The elements after the one ending at `end` (a `messages` element: the rest lies in one piece). */
export function elementsAfter(text: BodyText, end: number): Span[] {
  return inPiece(text, end, str.elementsAfter, spans);
}
