// Write-back is a list of disjoint edits on the received text: a changed JSON string value is
// replaced by JSON.stringify(newText), a new cache_control is inserted into its block, and nothing
// else moves. A planner that cannot express a change this way returns null and the message keeps
// its bytes.
import { deepEqual, isObject, type ContentBlock } from '@context-guru/components';
import type { BodyText } from './body-text';
import type { Span } from './json-scan';
import { elementAt, member } from './text-scan';
import type { Edit } from './wire.types';

export interface Plan {
  edits: Edit[];
  /** cache_control keys this plan inserts (they spend the breakpoint budget). */
  inserted: number;
}

// One definition of message equality for the pipeline, the encoder and the turn cache.
export { deepEqual, sameEnvelope, sameMessage } from '@context-guru/components';

/**
 * Replaces the JSON string at `span` after checking it still holds `expected` (null matches a raw
 * `null`): a mismatch means the span does not belong to the value we normalized.
 */
export function stringEdit(raw: BodyText, span: Span | undefined, expected: string | null, next: string): Edit | null {
  if (!span) return null;
  const old: unknown = JSON.parse(raw.slice(span.start, span.end));
  if (old !== expected) return null;
  return { start: span.start, end: span.end, text: JSON.stringify(next) };
}

/** Inserts `"key":value` just past the last member of the non-empty object spanning `obj`. */
export function memberInsert(raw: BodyText, obj: Span, key: string, value: unknown): Edit | null {
  let i = obj.end - 2; // obj.end - 1 is the closing brace
  while (i > obj.start && ' \t\n\r'.includes(raw.charAt(i))) i--;
  if (i <= obj.start) return null;
  return { start: i + 1, end: i + 1, text: `,${JSON.stringify(key)}:${JSON.stringify(value)}` };
}

function withoutCache(b: ContentBlock): Record<string, unknown> {
  const { cache_control: _dropped, ...rest } = b as Record<string, unknown>;
  return rest;
}

/** Metadata-only write: a breakpoint added to a block that had none, never an edit of one. */
function breakpointInsert(raw: BodyText, blockSpan: Span, rb: Record<string, unknown>, oc: unknown, nc: unknown): Edit | null {
  if (oc !== undefined || !isObject(nc) || Object.hasOwn(rb, 'cache_control')) return null;
  return memberInsert(raw, blockSpan, 'cache_control', nc);
}

/**
 * Block-by-block write-back of a content array: normalized block j is raw block map[j]. Allowed per
 * block: a text change on a text block, and a cache_control added where the raw block has none.
 */
export function planBlocks(
  raw: BodyText,
  content: Span,
  before: readonly ContentBlock[],
  after: readonly ContentBlock[],
  rawBlocks: readonly unknown[],
  map: readonly number[],
): Plan | null {
  if (after.length !== before.length || map.length !== before.length) return null;
  const plan: Plan = { edits: [], inserted: 0 };
  for (let j = 0; j < before.length; j++) {
    const [o, n, at] = [before[j], after[j], map[j]];
    if (!isObject(n) || deepEqual(o, n)) continue;
    if (o === undefined || at === undefined) return null; // the three lengths are equal
    const rb = rawBlocks[at];
    const blockSpan = elementAt(raw, content.start, at);
    if (!isObject(rb) || !blockSpan) return null;
    const oc = (o as Record<string, unknown>).cache_control;
    const nc = (n as Record<string, unknown>).cache_control;
    if (!deepEqual(oc, nc)) {
      const ins = breakpointInsert(raw, blockSpan, rb, oc, nc);
      if (!ins) return null;
      plan.edits.push({ ...ins, breakpoint: true });
      plan.inserted++;
    }
    const ob = withoutCache(o);
    const nb = withoutCache(n);
    if (deepEqual(ob, nb)) continue;
    if (ob.type !== 'text' || nb.type !== 'text' || typeof nb.text !== 'string') return null;
    if (!deepEqual({ ...ob, text: '' }, { ...nb, text: '' })) return null;
    const edit = stringEdit(raw, member(raw, blockSpan.start, 'text'), ob.text as string, nb.text);
    if (!edit) return null;
    plan.edits.push(edit);
  }
  return plan;
}

/** Two edits touch the same bytes (two insertions at one position count: their order would be ambiguous). */
function overlaps(a: Edit, b: Edit): boolean {
  if (a.start === a.end && b.start === b.end) return a.start === b.start;
  if (a.start === a.end) return b.start < a.start && a.start < b.end;
  if (b.start === b.end) return a.start < b.start && b.start < a.end;
  return a.start < b.end && b.start < a.end;
}

export function overlapsAny(group: readonly Edit[], others: readonly Edit[]): boolean {
  return group.some((e) => others.some((o) => overlaps(e, o)));
}

/** Applies disjoint edits in one pass from the end backwards; throws on overlap (a planner bug). */
export function applyEdits(raw: string | BodyText, edits: readonly Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start || b.end - a.end);
  const pieces: string[] = [];
  let tail = raw.length;
  for (const e of sorted) {
    if (e.end > tail || e.start > e.end) throw new Error(`overlapping edits at ${e.start}`);
    pieces.push(raw.slice(e.end, tail), e.text);
    tail = e.start;
  }
  pieces.push(raw.slice(0, tail));
  return pieces.reverse().join('');
}
