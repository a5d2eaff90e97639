// decode reads a body without changing a byte of it; encode writes back only what the pipeline
// changed and can be expressed as disjoint edits of the received text. Anything else keeps the
// client's bytes (reported as discarded), and an internal failure forwards the body untouched.
import { cloneMessage, type Message } from '@context-guru/components';
import { countBreakpoints, MAX_BREAKPOINTS } from './breakpoints';
import { normalizeAnthropic, planAnthropic } from './anthropic.wire';
import { expandDeclared, expandToolJson, toolChoiceAllows } from './expand-tool';
import { describeSyntaxError, locateSyntaxError } from './json-error';
import { elements, RawIndex } from './json-scan';
import { RAW_SENTINEL_RE, rawFieldsMatch, rawHasMarkers } from './markers-raw';
import { normalizeOpenAI, planOpenAI } from './openai.wire';
import { applyEdits, isObject, sameMessage, type Plan } from './splice';
import { WireError, type Dialect, type Edit, type EncodeResult, type Slot, type WireView } from './wire.types';

function malformed(raw: string, err: unknown): WireError {
  const found = locateSyntaxError(raw);
  if (found) return new WireError(400, 'malformed_json', describeSyntaxError(raw, found));
  // Our grammar accepted what JSON.parse refused (should not happen): fall back to V8's wording.
  const reason = err instanceof Error ? err.message : String(err);
  const pos = Number(/position (\d+)/.exec(reason)?.[1] ?? raw.length);
  return new WireError(400, 'malformed_json', describeSyntaxError(raw, { pos, reason }));
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
  if (!isObject(parsed)) throw new WireError(400, 'invalid_request', 'the request body must be a JSON object');
  if (!Array.isArray(parsed.messages)) throw new WireError(400, 'invalid_request', '`messages` must be an array');
  const body = parsed;
  const { messages, slots } = dialect === 'openai' ? normalizeOpenAI(body) : normalizeAnthropic(body);
  const index = new RawIndex(raw);
  const hasMarkers = rawHasMarkers(index);
  const tools = body.tools;
  return {
    dialect,
    raw,
    body,
    messages,
    systemHead:
      dialect === 'anthropic'
        ? anthropicSystemHead(body.system)
        : plainText(messages.find((m) => m.role === 'system')),
    firstUserText: plainText(messages.find((m) => m.role === 'user')),
    stream: body.stream === true,
    breakpoints: countBreakpoints(body),
    hasMarkers,
    hasPlaceholder: hasMarkers || rawFieldsMatch(index, RAW_SENTINEL_RE),
    toolsDeclared: Array.isArray(tools) && tools.length > 0,
    toolChoiceAllowsInjection: toolChoiceAllows(dialect, body.tool_choice),
    expandToolDeclared: expandDeclared(tools),
    slots,
    original: messages.map(cloneMessage),
    index,
  };
}

function plan(view: WireView, slot: Slot, before: Message, after: Message): Plan | null {
  try {
    return slot.kind === 'openai'
      ? planOpenAI(view.index, view.body, slot, before, after)
      : planAnthropic(view.index, view.body, slot, before, after);
  } catch {
    return null; // a scan or parse surprise on one message: that message keeps its bytes
  }
}

/** Appends the expand tool last to `tools`, creating `tools` when absent; null when not allowed. */
function injection(view: WireView): Edit | null {
  if (!view.toolChoiceAllowsInjection || view.expandToolDeclared) return null;
  const raw = view.raw;
  const tool = expandToolJson(view.dialect);
  const span = view.index.topLevel('tools');
  if (span) {
    if (raw[span.start] !== '[') return null;
    const list = elements(raw, span.start);
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
export function encodeRequest(view: WireView, out: Message[], opts: { injectExpand: boolean }): EncodeResult {
  const unchanged: EncodeResult = { raw: view.raw, changed: false, discarded: [], injected: false, breakpoints: view.breakpoints };
  try {
    return encode(view, out, opts, unchanged);
  } catch {
    return unchanged;
  }
}

function encode(view: WireView, out: Message[], opts: { injectExpand: boolean }, unchanged: EncodeResult): EncodeResult {
  const edits: Edit[] = [];
  const discarded: number[] = [];
  const changed: number[] = [];
  const original = view.original;
  // Spending breakpoints the inbound body did not have is capped so we never cause a breach.
  let budget = Math.max(0, MAX_BREAKPOINTS - view.breakpoints);
  let inserted = 0;
  for (let i = 0; i < Math.max(out.length, original.length); i++) {
    const before = original[i];
    const after = out[i];
    if (before && after && sameMessage(before, after)) continue;
    changed.push(i);
    // A different message count (a rebuild) has no write-back here: every differing index is discarded.
    const p = before && after && out.length === original.length ? plan(view, view.slots[i]!, before, after) : null;
    if (!p || p.inserted > budget) {
      discarded.push(i);
      continue;
    }
    budget -= p.inserted;
    inserted += p.inserted;
    edits.push(...p.edits);
  }
  const inj = opts.injectExpand ? injection(view) : null;
  if (inj) edits.push(inj);
  const injected = inj !== null;
  if (!edits.length) return { ...unchanged, discarded };
  try {
    const raw = applyEdits(view.raw, edits);
    return { raw, changed: true, discarded, injected, breakpoints: view.breakpoints + inserted };
  } catch {
    return { ...unchanged, discarded: changed };
  }
}
