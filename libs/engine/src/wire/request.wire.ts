// decode reads a body without changing a byte of it; encode writes back only what the pipeline
// changed and can be expressed as disjoint edits of the received text. Anything else keeps the
// client's bytes (reported as discarded), and an internal failure forwards the body untouched.
import { cloneMessage, isObject, shareTexts, type Message, type MessageOrigin } from '@context-guru/components';
import { countBreakpoints, MAX_BREAKPOINTS } from './breakpoints';
import { normalizeAnthropic, planAnthropic } from './anthropic.wire';
import { expandDeclared, expandToolJson, toolChoiceAllows } from './expand-tool';
import { describeSyntaxError, locateSyntaxError } from './json-error';
import { depthViolation, MAX_JSON_DEPTH } from './json-scan';
import { RawIndex } from './raw-index';
import { elements } from './text-scan';
import { firstFieldMatch, RAW_MARKER_RE, RAW_SENTINEL_RE } from './markers-raw';
import { normalizeOpenAI, planOpenAI, type Normalized } from './openai.wire';
import { normalizeResponses, planResponses, responsesHeads } from './responses.wire';
import { geminiAllowsInjection, geminiHeads, normalizeGemini, planGemini } from './gemini.wire';
import { geminiInjection } from './gemini-tool';
import type { OutChunks } from './out-chunks';
import { rebuildRequest } from './rebuild';
import { rebuildResponses } from './rebuild-responses';
import { applyEdits, overlapsAny, sameMessage, type Plan } from './splice';
import { WireError, type Dialect, type Edit, type EncodeResult, type Slot, type WireView } from './wire.types';

function malformed(raw: string, err: unknown): WireError {
  const found = locateSyntaxError(raw);
  if (found) return new WireError('malformed_json', describeSyntaxError(raw, found));
  // Our grammar accepted what JSON.parse refused (should not happen): fall back to V8's wording.
  const reason = err instanceof Error ? err.message : String(err);
  const pos = Number(/position (\d+)/.exec(reason)?.[1] ?? raw.length);
  return new WireError('malformed_json', describeSyntaxError(raw, { pos, reason }));
}

/**
 * Everything after decoding (normalizing, comparing, serializing blocks, components) may walk a
 * value recursively; refusing depth here bounds all of them. `from` skips an already-checked prefix.
 */
function refuseDeepNesting(raw: string, from: number): void {
  const at = depthViolation(raw, from);
  if (at >= 0) throw new WireError('too_deep', `JSON nesting deeper than ${MAX_JSON_DEPTH} levels at position ${at}`);
}

/** Text of string content, or of the text blocks of block content (other blocks ignored). */
function plainText(m: Message | undefined): string {
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  if (!Array.isArray(m.content)) return '';
  return m.content.map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('');
}

function anthropicSystemHead(system: unknown): string {
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) return '';
  const first = system.find((b) => isObject(b) && b.type === 'text' && typeof b.text === 'string');
  return first ? (first as { text: string }).text : '';
}

export function decodeRequest(dialect: Dialect, raw: string): WireView {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw malformed(raw, err);
  }
  refuseDeepNesting(raw, 0);
  if (!isObject(parsed)) throw new WireError('invalid_request', 'the request body must be a JSON object');
  const norm = normalized(dialect, parsed);
  shareTexts(norm.messages);
  return assembleView(dialect, parsed, norm, norm.messages.map(cloneMessage), new RawIndex(raw, undefined, listKey(dialect)));
}

/** The body's list of turns: `messages`, the Responses API's `input` items or Gemini's `contents`. */
export function listKey(dialect: Dialect): 'messages' | 'input' | 'contents' {
  return dialect === 'responses' ? 'input' : dialect === 'gemini' ? 'contents' : 'messages';
}

function normalized(dialect: Dialect, body: Record<string, unknown>): Normalized {
  if (dialect === 'responses') {
    const input = body.input;
    // `input` may be one string (a user message) or absent (a stored prompt): neither has items.
    if (input !== undefined && typeof input !== 'string' && !Array.isArray(input))
      throw new WireError('invalid_request', '`input` must be a string or an array of items');
    return normalizeResponses(body);
  }
  if (dialect === 'gemini') {
    if (!Array.isArray(body.contents)) throw new WireError('invalid_request', '`contents` must be an array');
    return normalizeGemini(body);
  }
  if (!Array.isArray(body.messages)) throw new WireError('invalid_request', '`messages` must be an array');
  return dialect === 'openai' ? normalizeOpenAI(body) : normalizeAnthropic(body);
}

function heads(
  dialect: Dialect,
  body: Record<string, unknown>,
  messages: readonly Message[],
): { systemHead: string; firstUserText: string } {
  if (dialect === 'responses') return responsesHeads(body);
  if (dialect === 'gemini') return geminiHeads(body);
  const systemHead = dialect === 'anthropic' ? anthropicSystemHead(body.system) : plainText(messages.find((m) => m.role === 'system'));
  return { systemHead, firstUserText: plainText(messages.find((m) => m.role === 'user')) };
}

/** What an earlier turn already learned about placeholders in the byte-identical prefix. */
export interface PrefixScan {
  /** Scan only from here on. */
  from: number;
  firstMarkerAt: number;
  firstSentinelAt: number;
  firstOneHourAt: number;
}

/** The view over decoded parts; with `prefix`, placeholder scans cover only the new bytes. */
export function assembleView(
  dialect: Dialect,
  body: Record<string, unknown>,
  norm: { messages: Message[]; slots: Slot[] },
  original: Message[],
  index: RawIndex,
  prefix?: PrefixScan,
): WireView {
  const { messages, slots } = norm;
  const firstMarkerAt =
    prefix && prefix.firstMarkerAt >= 0 ? prefix.firstMarkerAt : firstFieldMatch(index, RAW_MARKER_RE, prefix?.from ?? 0);
  const firstSentinelAt =
    prefix && prefix.firstSentinelAt >= 0 ? prefix.firstSentinelAt : firstFieldMatch(index, RAW_SENTINEL_RE, prefix?.from ?? 0);
  const firstOneHourAt = prefix && prefix.firstOneHourAt >= 0 ? prefix.firstOneHourAt : index.text.indexOf('1h', prefix?.from ?? 0);
  const tools = body.tools;
  return {
    dialect,
    raw: index.text.whole(),
    text: index.text,
    body,
    messages,
    ...heads(dialect, body, messages),
    stream: body.stream === true,
    breakpoints: countBreakpoints(body),
    hasMarkers: firstMarkerAt >= 0,
    hasPlaceholder: firstMarkerAt >= 0 || firstSentinelAt >= 0,
    toolsDeclared: Array.isArray(tools) && tools.length > 0,
    toolChoiceAllowsInjection: dialect === 'gemini' ? geminiAllowsInjection(body) : toolChoiceAllows(dialect, body.tool_choice),
    expandToolDeclared: expandDeclared(tools),
    slots,
    original,
    index,
    firstMarkerAt,
    firstSentinelAt,
    firstOneHourAt,
  };
}

/** The client message each normalized message came from: components count "newest N messages" on it. */
export function messageOrigin(view: WireView): MessageOrigin {
  const list = view.body[listKey(view.dialect)];
  return { of: view.slots.map((s) => s.msg), count: Array.isArray(list) ? list.length : 0 };
}

function plan(view: WireView, slot: Slot, before: Message, after: Message): Plan | null {
  try {
    if (slot.kind === 'openai') return planOpenAI(view.index, view.body, slot, before, after);
    if (view.dialect === 'responses') return planResponses(view.index, slot, before, after);
    if (view.dialect === 'gemini') return planGemini(view.index, slot, before, after);
    return planAnthropic(view.index, view.body, slot, before, after);
  } catch {
    return null; // a scan or parse surprise on one message: that message keeps its bytes
  }
}

/** Appends the expand tool last to `tools`, creating `tools` when absent; null when not allowed. */
function injection(view: WireView): Edit | null {
  if (!view.toolChoiceAllowsInjection || view.expandToolDeclared) return null;
  if (view.dialect === 'gemini') return geminiInjection(view);
  const tool = expandToolJson(view.dialect);
  const span = view.index.topLevel('tools');
  if (span) {
    if (view.text.charAt(span.start) !== '[') return null;
    const list = elements(view.text, span.start);
    const last = list[list.length - 1];
    return last ? { start: last.end, end: last.end, text: `,${tool}` } : { start: span.start + 1, end: span.start + 1, text: tool };
  }
  // Legacy `functions` beside a new `tools` would be rejected by the provider.
  if (view.body.functions !== undefined) return null;
  const at = view.index.insertionPoint();
  return { start: at.at, end: at.at, text: `${at.comma ? ',' : ''}"tools":[${tool}]` };
}

/**
 * The body to forward: view.raw with every losslessly expressible change of `out` (vs the decoded
 * messages) spliced in, plus the expand tool when asked and allowed. Never throws: on any internal
 * failure the received bytes are forwarded.
 */
export interface EncodeOptions {
  injectExpand: boolean;
  /**
   * Frozen expand trails to re-insert (expand/trail-edits.ts), and the newest turn's withdrawn
   * breakpoints (withdraw-breakpoints.ts): each group is applied whole, or left out whole when it
   * would collide with an edit the pipeline's changes need.
   */
  trails?: readonly Edit[][];
}

export function encodeRequest(view: WireView, out: Message[], opts: EncodeOptions): EncodeResult {
  return encodeEdits(view, out, opts).result;
}

/** The edits an encode applied to the received text (absolute positions), for reuse on the next turn. */
export interface EncodePlan {
  edits: Edit[];
  /** The output after the reused prefix, when the encode kept that prefix (the rest is its bytes). */
  afterPrefix?: string;
}

/** A previous turn's output for the byte-identical prefix of this body (see turn-cache.ts). */
export interface ReusedPrefix {
  /** Raw position where the reused prefix ends (the end of a whole body message). */
  rawEnd: number;
  /** The previous output's bytes for raw[0, rawEnd). */
  outPrefix: string;
  /** The same as text pieces with their UTF-8 bytes, when the previous turn kept them. */
  outChunks?: OutChunks;
  /** The first normalized message not covered by the prefix. */
  fromMessage: number;
  /** The previous turn's edits inside the prefix (same positions here: the bytes are identical). */
  prefixEdits: Edit[];
  discardedBefore: number[];
}

/**
 * Encodes and says which edits it applied. With `reused`, messages inside the prefix are not
 * planned again: their output bytes are the previous turn's, which the caller proved identical.
 * Never throws: an internal failure forwards the body as received.
 */
export function encodeEdits(
  view: WireView,
  out: Message[],
  opts: EncodeOptions,
  reused?: ReusedPrefix,
): { result: EncodeResult; plan: EncodePlan | null } {
  const unchanged: EncodeResult = { raw: view.raw, changed: false, discarded: [], injected: false, breakpoints: view.breakpoints };
  try {
    return encode(view, out, opts, unchanged, reused);
  } catch {
    return { result: unchanged, plan: { edits: [] } };
  }
}

function encode(
  view: WireView,
  out: Message[],
  opts: EncodeOptions,
  unchanged: EncodeResult,
  reused: ReusedPrefix | undefined,
): { result: EncodeResult; plan: EncodePlan | null } {
  // A changed count or a changed role may be a restructuring (summarize): rebuild it if it is one.
  // With the count unchanged, a declined rebuild still writes every in-place change below.
  const sameCount = out.length === view.original.length;
  if (!sameCount || out.some((m, i) => m.role !== view.original[i]?.role)) {
    const rebuilt = encodeRebuild(view, out, opts, unchanged);
    if (rebuilt.discarded.length === 0 || !sameCount) return { result: rebuilt, plan: null };
    reused = undefined;
  }
  const inj = opts.injectExpand ? injection(view) : null;
  // The expand tool must land after the reused prefix, or be last turn's very edit inside it (a
  // `tools` list ahead of the messages: byte-identical there, so planned the same), or the prefix
  // bytes are not last turn's.
  if (reused && !injectionReusable(inj, reused)) reused = undefined;
  // So must any trail edit the previous turn did not make in that prefix.
  if (reused && !trailsReusable(opts.trails ?? [], reused)) reused = undefined;
  const { edits, discarded, changed, inserted } = planInPlace(view, out, reused);
  edits.push(...acceptTrails(opts.trails ?? [], edits, reused));
  if (inj && !(reused && inj.start < reused.rawEnd)) edits.push({ ...inj, injection: true });
  const injected = inj !== null;
  if (!edits.length) return { result: { ...unchanged, discarded }, plan: { edits } };
  try {
    const { raw, afterPrefix } = applyAfterPrefix(view, edits, reused);
    const breakpoints = view.breakpoints + inserted - edits.filter((e) => e.withdrawal).length;
    return { result: { raw, changed: true, discarded, injected, breakpoints }, plan: { edits, afterPrefix } };
  } catch {
    return { result: { ...unchanged, discarded: changed }, plan: { edits: [] } };
  }
}

/**
 * The in-place edits of every message that changed after the reused prefix. A change that cannot
 * be planned, or would spend breakpoints the inbound body did not have beyond the cap (we never
 * cause a breach), is discarded: that message is forwarded as received.
 */
function planInPlace(
  view: WireView,
  out: Message[],
  reused: ReusedPrefix | undefined,
): { edits: Edit[]; discarded: number[]; changed: number[]; inserted: number } {
  const edits: Edit[] = reused ? [...reused.prefixEdits] : [];
  const discarded: number[] = reused ? [...reused.discardedBefore] : [];
  const changed: number[] = [...discarded];
  const original = view.original;
  let inserted = edits.filter((e) => e.breakpoint).length;
  let budget = Math.max(0, MAX_BREAKPOINTS - view.breakpoints - inserted);
  for (let i = reused?.fromMessage ?? 0; i < Math.max(out.length, original.length); i++) {
    const before = original[i];
    const after = out[i];
    if (before && after && sameMessage(before, after)) continue;
    changed.push(i);
    const slot = view.slots[i];
    const p = before && after && slot ? plan(view, slot, before, after) : null;
    if (!p || p.inserted > budget) {
      discarded.push(i);
      continue;
    }
    budget -= p.inserted;
    inserted += p.inserted;
    edits.push(...p.edits);
  }
  return { edits, discarded, changed, inserted };
}

/** The output bytes: the reused prefix as the previous turn wrote it, then this turn's edits on the rest. */
function applyAfterPrefix(view: WireView, edits: Edit[], reused: ReusedPrefix | undefined): { raw: string; afterPrefix?: string } {
  if (!reused) return { raw: applyEdits(view.text, edits) };
  const tail = edits
    .filter((e) => e.start >= reused.rawEnd)
    .map((e) => ({ ...e, start: e.start - reused.rawEnd, end: e.end - reused.rawEnd }));
  const afterPrefix = applyEdits(view.text.slice(reused.rawEnd), tail);
  return { raw: reused.outPrefix + afterPrefix, afterPrefix };
}

const sameEdit = (a: Edit, b: Edit): boolean => a.start === b.start && a.end === b.end && a.text === b.text;

function injectionReusable(inj: Edit | null, reused: ReusedPrefix): boolean {
  const held = reused.prefixEdits.find((e) => e.injection);
  if (!inj || inj.start >= reused.rawEnd) return held === undefined;
  return held !== undefined && sameEdit(held, inj);
}

function trailsReusable(trails: readonly Edit[][], reused: ReusedPrefix): boolean {
  return trails.every((g) => g.every((e) => e.start >= reused.rawEnd || reused.prefixEdits.some((p) => sameEdit(p, e))));
}

/** The trail edits to add: whole groups that collide with no other edit, minus those the reused prefix already holds. */
function acceptTrails(trails: readonly Edit[][], edits: readonly Edit[], reused: ReusedPrefix | undefined): Edit[] {
  const taken: Edit[] = [];
  for (const group of trails) {
    const fresh = reused ? group.filter((e) => !reused.prefixEdits.some((p) => sameEdit(p, e))) : group;
    if (overlapsAny(fresh, [...edits, ...taken])) continue;
    taken.push(...fresh);
  }
  return taken;
}

/**
 * A restructured message list (summarize) is rebuilt from whole received messages (rebuild.ts). A
 * declined rebuild forwards the received messages and discards every index that differs.
 */
function encodeRebuild(view: WireView, out: Message[], opts: EncodeOptions, unchanged: EncodeResult): EncodeResult {
  const inj = opts.injectExpand ? injection(view) : null;
  const rebuild = view.dialect === 'responses' ? rebuildResponses : rebuildRequest;
  const rebuilt = rebuild(view, out, inj, (i, before, after) => {
    const slot = view.slots[i];
    return slot ? plan(view, slot, before, after) : null;
  });
  if (rebuilt) return { raw: rebuilt.raw, changed: true, discarded: [], injected: inj !== null, breakpoints: rebuilt.breakpoints };
  const discarded: number[] = [];
  for (let i = 0; i < Math.max(out.length, view.original.length); i++) {
    const before = view.original[i];
    const after = out[i];
    if (!before || !after || !sameMessage(before, after)) discarded.push(i);
  }
  if (!inj) return { ...unchanged, discarded };
  return { raw: applyEdits(view.raw, [inj]), changed: true, discarded, injected: true, breakpoints: view.breakpoints };
}
