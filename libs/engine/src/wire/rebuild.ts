// The write-back for a pipeline that changed the message count (summarize): the output must be the
// input with one contiguous run of whole body messages replaced by new text-only messages. Every
// surviving body message is emitted as its received bytes (plus any planned content edits); only
// the new messages are fresh JSON. Anything that does not fit that shape, or a result the provider
// would refuse, declines — the caller then forwards the received body.
import type { Message } from '@context-guru/components';
import { countBreakpoints, MAX_BREAKPOINTS } from './breakpoints';
import { elements, member } from './json-scan';
import { validateProviderShape } from './shape-validator';
import { applyEdits, sameEnvelope, sameMessage, type Plan } from './splice';
import type { Edit, WireView } from './wire.types';

export type PlanFn = (index: number, before: Message, after: Message) => Plan | null;

export interface Rebuilt {
  raw: string;
  breakpoints: number;
}

/** Messages with a tool id are unambiguous: they may match on envelope alone (content edited). */
function keyed(m: Message): boolean {
  return m.tool_call_id !== undefined || (m.tool_calls?.length ?? 0) > 0;
}

function matches(out: Message | undefined, orig: Message | undefined): boolean {
  if (!out || !orig) return false;
  return sameMessage(orig, out) || (keyed(orig) && sameEnvelope(orig, out));
}

/** Text of a message that may be emitted as fresh JSON; null when it carries ids or non-text blocks. */
export function freshTexts(m: Message): string[] | null {
  if (keyed(m) || m.name !== undefined) return null;
  if (typeof m.content === 'string') return [m.content];
  if (!Array.isArray(m.content)) return null;
  const texts: string[] = [];
  for (const b of m.content) {
    if (b.type !== 'text' || typeof b.text !== 'string') return null;
    texts.push(b.text);
  }
  return texts;
}

/**
 * out index → original index (or -1 for a new message): a matching prefix, then new messages in
 * place of at least one received message, then a matching suffix. Null for any other shape.
 */
export function alignRebuild(original: readonly Message[], out: readonly Message[]): number[] | null {
  const n = original.length;
  const m = out.length;
  const lim = Math.min(n, m);
  let p = 0;
  while (p < lim && matches(out[p], original[p])) p++;
  let s = 0;
  while (s < lim - p && matches(out[m - 1 - s], original[n - 1 - s])) s++;
  const map: number[] = [];
  for (let i = 0; i < m; i++) map.push(i < p ? i : i >= m - s ? i - m + n : -1);
  // A replacement, not a bare deletion or insertion: received messages never vanish without a trace.
  if (p + s === m || p + s === n) return null;
  for (const fresh of out.slice(p, m - s)) if (freshTexts(fresh) === null) return null;
  return map;
}

type Piece =
  { kind: 'raw'; body: number; role: string; edits: Edit[]; appended: string[] } | { kind: 'new'; role: string; texts: string[] };

export type RawPiece = Extract<Piece, { kind: 'raw' }>;

const textBlock = (t: string) => JSON.stringify({ type: 'text', text: t });

/** A received body message with its edits applied and any appended text blocks (Anthropic). */
export function renderRaw(view: WireView, piece: RawPiece): string | null {
  const span = view.index.message(piece.body);
  if (!span) return null;
  const raw = view.raw;
  const edits = piece.edits.map((e) => ({ start: e.start - span.start, end: e.end - span.start, text: e.text }));
  if (piece.appended.length) {
    const content = member(raw, span.start, 'content');
    if (!content) return null;
    const blocks = piece.appended.map(textBlock).join(',');
    if (raw[content.start] === '[') {
      const list = elements(raw, content.start);
      const at = list.at(-1)?.end ?? content.start + 1;
      edits.push({ start: at - span.start, end: at - span.start, text: list.length ? `,${blocks}` : blocks });
    } else if (raw[content.start] === '"') {
      // The received string stays byte-identical as the text of the first block.
      const token = raw.slice(content.start, content.end);
      edits.push({ start: content.start - span.start, end: content.end - span.start, text: `[{"type":"text","text":${token}},${blocks}]` });
    } else {
      return null;
    }
  }
  return applyEdits(raw.slice(span.start, span.end), edits);
}

function renderNew(view: WireView, piece: Extract<Piece, { kind: 'new' }>): string {
  if (view.dialect === 'anthropic') return `{"role":${JSON.stringify(piece.role)},"content":[${piece.texts.map(textBlock).join(',')}]}`;
  return JSON.stringify({ role: piece.role, content: piece.texts.join('\n\n') });
}

/**
 * body index → kept, when every body message survives whole or is dropped whole. A body message
 * with nothing normalized (an Anthropic turn whose tool results are only images) travels with the
 * turn before it, as results travel with their calls; elsewhere such a message cannot be judged.
 */
function bodyFates(view: WireView, map: readonly number[]): boolean[] | null {
  const total = Array.isArray(view.body.messages) ? view.body.messages.length : 0;
  const kept = new Set(map.filter((j) => j >= 0));
  const fate: Array<boolean | undefined> = new Array(total).fill(undefined);
  for (const [j, { msg: body }] of view.slots.entries()) {
    if (fate[body] !== undefined && fate[body] !== kept.has(j)) return null;
    fate[body] = kept.has(j);
  }
  for (let b = 0; b < total; b++) {
    if (fate[b] !== undefined) continue;
    if (view.dialect !== 'anthropic' || b === 0) return null;
    fate[b] = fate[b - 1];
  }
  return fate as boolean[];
}

/** A received message (slot `j`) joins the piece of its body message, with its planned edits; false declines. */
function keepReceived(view: WireView, pieces: Piece[], j: number, m: Message, planFn: PlanFn): boolean {
  const slot = view.slots[j];
  const orig = view.original[j];
  if (!slot || !orig) return false;
  const last = pieces[pieces.length - 1];
  let piece: RawPiece;
  if (last?.kind === 'raw' && last.body === slot.msg) piece = last;
  else {
    piece = { kind: 'raw', body: slot.msg, role: orig.role === 'assistant' ? 'assistant' : 'user', edits: [], appended: [] };
    pieces.push(piece);
  }
  if (sameMessage(orig, m)) return true;
  const p = planFn(j, orig, m);
  if (!p) return false;
  piece.edits.push(...p.edits);
  return true;
}

/** A new (text-only) message becomes a fresh piece, or joins the user turn before it (Anthropic); false declines. */
function addFresh(view: WireView, pieces: Piece[], m: Message): boolean {
  const texts = freshTexts(m);
  if (!texts) return false;
  const last = pieces[pieces.length - 1];
  if (view.dialect === 'anthropic') {
    if (m.role === 'system') return false;
    // Anthropic roles alternate: a new user turn joins the user turn before it as text blocks.
    if (m.role === 'user' && last?.role === 'user') {
      if (last.kind === 'raw') last.appended.push(...texts);
      else last.texts.push(...texts);
      return true;
    }
  }
  pieces.push({ kind: 'new', role: m.role, texts });
  return true;
}

/** The pieces the rebuilt messages array is made of, in order, or null to decline. */
function planPieces(view: WireView, out: readonly Message[], map: readonly number[], fates: boolean[], planFn: PlanFn): Piece[] | null {
  const pieces: Piece[] = [];
  const slotted = new Set(view.slots.map((s) => s.msg));
  // Kept body messages with nothing normalized are emitted right after the message they follow.
  const carryAfter = (body: number): void => {
    for (let b = body + 1; b < fates.length && !slotted.has(b); b++) {
      if (fates[b]) pieces.push({ kind: 'raw', body: b, role: 'user', edits: [], appended: [] });
    }
  };
  for (const [i, m] of out.entries()) {
    const j = map[i] ?? -1;
    if (j < 0) {
      if (!addFresh(view, pieces, m)) return null;
      continue;
    }
    if (!keepReceived(view, pieces, j, m, planFn)) return null;
    const body = view.slots[j]?.msg;
    if (body !== undefined && view.slots[j + 1]?.msg !== body) carryAfter(body);
  }
  return pieces;
}

function renderPieces(view: WireView, pieces: readonly Piece[]): string[] | null {
  const rendered: string[] = [];
  for (const piece of pieces) {
    const text = piece.kind === 'raw' ? renderRaw(view, piece) : renderNew(view, piece);
    if (text === null) return null;
    rendered.push(text);
  }
  return rendered;
}

/**
 * The received body with its messages array replaced (and the expand tool injected), or null when
 * the provider would refuse it where it accepted the received one, or it holds too many breakpoints.
 */
export function checkedBody(view: WireView, rendered: readonly string[], inj: Edit | null): Rebuilt | null {
  const span = view.index.topLevel(view.index.listKey);
  if (!span) return null;
  const edits: Edit[] = [{ start: span.start, end: span.end, text: `[${rendered.join(',')}]` }];
  if (inj) edits.push(inj);
  const raw = applyEdits(view.raw, edits);
  const body: unknown = JSON.parse(raw);
  const problems = validateProviderShape(view.dialect, body).length;
  if (problems > 0 && problems > validateProviderShape(view.dialect, view.body).length) return null;
  const breakpoints = countBreakpoints(body as Record<string, unknown>);
  if (breakpoints > MAX_BREAKPOINTS && breakpoints > view.breakpoints) return null;
  return { raw, breakpoints };
}

/** The rebuilt body, or null to decline. `inj` is the expand-tool edit when one is wanted. */
export function rebuildRequest(view: WireView, out: readonly Message[], inj: Edit | null, planFn: PlanFn): Rebuilt | null {
  // Responses items have their own rebuild (rebuild-responses.ts); Gemini contents are never
  // restructured: only function responses are rewritten, in place.
  if (view.dialect === 'responses' || view.dialect === 'gemini') return null;
  const map = alignRebuild(view.original, out);
  const fates = map ? bodyFates(view, map) : null;
  if (!map || !fates) return null;
  const pieces = planPieces(view, out, map, fates, planFn);
  const rendered = pieces && renderPieces(view, pieces);
  return rendered ? checkedBody(view, rendered, inj) : null;
}
