// Re-inserts frozen expand trails (trail.ts) into a request, as edits of the client's raw bytes:
// the withheld expand calls go back where they were in the assistant message, their results at the
// head of the next user message (OpenAI: tool messages right after the assistant message), and a
// message that was several provider turns is split back into them. The client's own bytes are
// never rewritten — only the separators between elements are — so the pipeline's edits inside
// messages stay disjoint. A trail that does not fit the message exactly is left out whole.
import { frozenSlot, itemAt, type Dialect, type SessionSnapshot } from '@context-guru/components';
import type { BodyText } from '../wire/body-text';
import type { Span } from '../wire/json-scan';
import { elements, member, members } from '../wire/text-scan';
import { overlapsAny } from '../wire/splice';
import type { Edit, WireView } from '../wire/wire.types';
import { field, isObject } from './json-shape';
import { responsesTrailEdits, responsesTrailKeys } from './responses-trail';
import { responsesChainEdits, responsesChainKeys } from './responses-chain';
import { messageAnchor, openAiText, parseTrail, TRAIL_COMPONENT } from './trail';
import type { Trail, TrailCall } from './expand.types';

const anchors = new WeakMap<object, string | null>();

/** The anchor of body message `m`, memoised by object (a warm turn reuses the prefix's parsed messages). */
function anchorOf(dialect: Dialect, m: unknown): string | null {
  if (!isObject(m)) return null;
  let a = anchors.get(m);
  if (a === undefined) anchors.set(m, (a = messageAnchor(dialect, m)));
  return a;
}

/** Content keys to load with the session so every trail this request's assistant messages anchor comes back. */
export function trailKeys(view: WireView): string[] {
  const out: string[] = [];
  if (view.dialect === 'responses') return [...responsesTrailKeys(view), ...responsesChainKeys(view)];
  // Gemini answers leave no trail yet (docs/gemini.md): nothing to load or re-insert.
  if (view.dialect === 'gemini') return out;
  for (const m of view.body.messages as unknown[]) {
    const a = anchorOf(view.dialect, m);
    if (a !== null) out.push(a);
  }
  return out;
}

/** One group of edits per re-inserted trail, in message order (a group applies whole or not at all). */
export function trailEdits(view: WireView, snapshot: SessionSnapshot): Edit[][] {
  const groups: Edit[][] = [];
  if (snapshot.frozen.size === 0 || view.dialect === 'gemini') return groups;
  if (view.dialect === 'responses') return [...responsesTrailEdits(view, snapshot), ...responsesChainEdits(view, snapshot)];
  const messages = view.body.messages as unknown[];
  messages.forEach((m, i) => {
    const a = anchorOf(view.dialect, m);
    const stored = a === null ? undefined : snapshot.frozen.get(frozenSlot(TRAIL_COMPONENT, a));
    const trail = stored === undefined ? null : parseTrail(stored);
    if (!trail || trail.dialect !== view.dialect || trail.anchor !== a) return;
    try {
      const edits = view.dialect === 'anthropic' ? anthropicEdits(view, i, trail) : openAiEdits(view, i, trail);
      if (edits && edits.length && !overlapsAny(edits, groups.flat())) groups.push(edits);
    } catch {
      // A surprise in the raw scan: this trail stays out, the message keeps the client's bytes.
    }
  });
  return groups;
}

type Item = { call: string } | { brk: string };

/**
 * The separator before element g of an array (g = count: before the closing bracket) rewritten to
 * carry `items`: calls join the current element list, a break closes the message and opens the
 * next piece. Commas are placed so every list stays well formed.
 */
function separatorEdit(
  raw: BodyText,
  array: Span,
  els: readonly Span[],
  g: number,
  items: readonly Item[],
  piece: (brk: string) => string,
): Edit {
  // g is a boundary between visible entries, 0..els.length (the caller checked the count).
  const start = g === 0 ? array.start + 1 : itemAt(els, g - 1, 'entry before the boundary').end;
  const end = g === els.length ? array.end - 1 : itemAt(els, g, 'entry after the boundary').start;
  let text = '';
  let need = g > 0;
  for (const it of items) {
    if ('call' in it) {
      text += (need ? ',' : '') + it.call;
      need = true;
    } else {
      text += piece(it.brk);
      need = false;
    }
  }
  if (g < els.length && need) text += ',';
  return { start, end, text };
}

/** Calls placed at their boundaries: round r's call `at` goes before the round's visible entry `at`. */
function placeCalls(into: Map<number, Item[]>, offset: number, calls: readonly TrailCall[]): void {
  for (const c of calls) push(into, offset + c.at, { call: c.json });
}

function push(into: Map<number, Item[]>, g: number, item: Item): void {
  const list = into.get(g);
  if (list) list.push(item);
  else into.set(g, [item]);
}

function keyIndex(raw: BodyText, at: number, key: string): number {
  return members(raw, at).findIndex((m) => m.key === key);
}

/** Where the withheld calls and the splitting result messages go, by boundary; null when a round has no results. */
function splitItems(rounds: Trail['rounds'], answerNext: boolean): Map<number, Item[]> | null {
  const items = new Map<number, Item[]>();
  const last = rounds.at(-1);
  let offset = 0;
  for (const r of rounds) {
    const isLast = r === last;
    if (!isLast || answerNext) placeCalls(items, offset, r.calls);
    offset += r.visible;
    if (isLast) continue;
    // An earlier round's results are the user message that splits the turn: none, no split.
    const [brk] = r.results;
    if (brk === undefined) return null;
    push(items, offset, { brk });
  }
  return items;
}

function anthropicEdits(view: WireView, i: number, trail: Trail): Edit[] | null {
  const raw = view.text;
  const span = view.index.message(i);
  const content = span && member(raw, span.start, 'content');
  if (!span || !content || raw.charAt(content.start) !== '[') return null;
  const els = elements(raw, content.start);
  const rounds = trail.rounds;
  if (els.length !== rounds.reduce((n, r) => n + r.visible, 0)) return null;
  // Each piece of a split message must say whose it is: the client's `role` comes before `content`.
  if (rounds.length > 1) {
    const role = keyIndex(raw, span.start, 'role');
    if (role < 0 || role > keyIndex(raw, span.start, 'content')) return null;
  }
  const last = rounds.at(-1);
  if (!last) return null;
  const next = (view.body.messages as unknown[])[i + 1];
  const answerNext = last.calls.length > 0 && field(next, 'role') === 'user';
  // A last piece left empty would be an invalid message: such a trail stays out.
  if (rounds.length > 1 && last.visible === 0 && !answerNext) return null;
  const items = splitItems(rounds, answerNext);
  if (!items) return null;
  const piece = (results: string) => `]},${results},{"role":"assistant","content":[`;
  const edits = [...items].map(([g, list]) => separatorEdit(raw, content, els, g, list, piece));
  if (answerNext) {
    const nextSpan = view.index.message(i + 1);
    const e = nextSpan && resultsAtHead(raw, nextSpan, last.results);
    if (!e) return null;
    edits.push(e);
  }
  return edits;
}

/** Anthropic: tool_result blocks first in the next user message (a string content becomes its text block). */
function resultsAtHead(raw: BodyText, next: Span, results: readonly string[]): Edit | null {
  const c = member(raw, next.start, 'content');
  if (!c) return null;
  if (raw.charAt(c.start) === '[') {
    const els = elements(raw, c.start);
    const [head] = els;
    return { start: c.start + 1, end: head ? head.start : c.end - 1, text: results.join(',') + (head ? ',' : '') };
  }
  if (raw.charAt(c.start) !== '"') return null;
  const text = JSON.parse(raw.slice(c.start, c.end)) === '' ? '' : `,{"type":"text","text":${raw.slice(c.start, c.end)}}`;
  return { start: c.start, end: c.end, text: `[${results.join(',')}${text}]` };
}

function openAiEdits(view: WireView, i: number, trail: Trail): Edit[] | null {
  const raw = view.text;
  const span = view.index.message(i);
  const prev = i > 0 ? view.index.message(i - 1) : undefined;
  const message = (view.body.messages as unknown[])[i];
  if (!span || !prev || !isObject(message)) return null;
  const rounds = trail.rounds;
  const last = rounds.at(-1);
  if (!last) return null;
  const nextSpan = view.index.message(i + 1);
  const answerNext = last.calls.length > 0 && nextSpan !== undefined;
  const edits: Edit[] = [];
  if (rounds.length > 1) {
    // The earlier provider turns go in front; this message keeps only the last round's text.
    const earlier = rounds.slice(0, -1);
    // Each earlier OpenAI round carries its assistant message; one without cannot be re-inserted.
    if (earlier.some((r) => r.message === undefined)) return null;
    const pieces = earlier.flatMap((r) => (r.message === undefined ? [] : [r.message, ...r.results]));
    edits.push({ start: prev.end, end: span.start, text: `,${pieces.join(',')},` });
    const content = member(raw, span.start, 'content');
    if (!content || openAiText(message['content']) !== rounds.map((r) => r.text ?? '').join('')) return null;
    const calls = last.visible > 0 || answerNext;
    edits.push({ start: content.start, end: content.end, text: last.text || !calls ? JSON.stringify(last.text ?? '') : 'null' });
  }
  if (answerNext) {
    const e = callsInto(raw, span, last.visible, last.calls);
    if (!e) return null;
    edits.push(...e, { start: span.end, end: nextSpan.start, text: `,${last.results.join(',')},` });
  }
  return edits;
}

/** OpenAI: the withheld calls back into `tool_calls` (created when the client message has none). */
function callsInto(raw: BodyText, span: Span, visible: number, calls: readonly TrailCall[]): Edit[] | null {
  const tc = member(raw, span.start, 'tool_calls');
  if (tc && raw.charAt(tc.start) === '[') {
    const els = elements(raw, tc.start);
    if (els.length !== visible) return null;
    const items = new Map<number, Item[]>();
    placeCalls(items, 0, calls);
    return [...items].map(([g, list]) => separatorEdit(raw, tc, els, g, list, () => ''));
  }
  if (visible !== 0) return null;
  const list = `[${calls.map((c) => c.json).join(',')}]`;
  if (tc) return raw.slice(tc.start, tc.end) === 'null' ? [{ start: tc.start, end: tc.end, text: list }] : null;
  let at = span.end - 2;
  while (at > span.start && ' \t\n\r'.includes(raw.charAt(at))) at--;
  return [{ start: at + 1, end: at + 1, text: `,"tool_calls":${list}` }];
}
