// Gemini generateContent bodies carry `contents[]`, each `{role: "user"|"model", parts: [...]}`.
// Components see them in the normalized (chat) shape: a model content is an assistant message
// (its text parts as text, its functionCall parts as tool calls), each functionResponse part a
// tool message, and the other parts of a user content one user message. Only a functionResponse's
// text is ever written back, into its own JSON value; thought parts, thoughtSignature, inlineData,
// fileData, executable code and every part we do not know are opaque blocks nothing may rewrite,
// so their bytes go upstream exactly as received, as do systemInstruction, tools, toolConfig,
// generationConfig, safetySettings, cachedContent and unknown top-level fields.
import { isObject, type ContentBlock, type Message, type ToolCall } from '@context-guru/components';
import type { RawIndex } from './raw-index';
import { spanAt } from './text-scan';
import { sameEnvelope, stringEdit, type Plan } from './splice';
import type { Normalized } from './openai.wire';
import type { Slot } from './wire.types';

type Obj = Record<string, unknown>;

/** The keys a functionResponse's `response` commonly holds its text under (Gemini CLI: `output`). */
const TEXT_KEYS = ['output', 'content', 'result'];

/** A part that reads as plain text: a text part that is not the model's thought. */
function isPlainText(part: Obj): part is Obj & { text: string } {
  return typeof part.text === 'string' && part.thought !== true;
}

/** Text parts as text blocks; every other part an opaque block named by its kind. */
function blockOf(part: Obj): ContentBlock {
  if (isPlainText(part) && part.thoughtSignature === undefined) return { type: 'text', text: part.text };
  const kind = part.thought === true ? 'thought' : (Object.keys(part).find((k) => k !== 'thoughtSignature') ?? 'part');
  return { ...part, type: `gemini_${kind}` };
}

/**
 * Where the text of a functionResponse lives: a string member of `response` (`output` first, as
 * Gemini CLI sends it), or, for any other object, the whole `response` value as JSON text (null).
 */
function responseText(response: unknown): { key: string | null; text: string } | null {
  if (!isObject(response)) return null;
  for (const key of TEXT_KEYS) if (typeof response[key] === 'string') return { key, text: response[key] as string };
  const keys = Object.keys(response);
  const only = keys.length === 1 ? keys[0] : undefined;
  if (only !== undefined && typeof response[only] === 'string') return { key: only, text: response[only] as string };
  return { key: null, text: JSON.stringify(response) };
}

/** The calls of the latest model content that are still waiting for their functionResponse. */
type Pending = Array<{ call: ToolCall; answered: boolean }>;

/** A call's id: its own when the API gave one, else a stable name for its place in the body. */
function callOf(fc: Obj, i: number, k: number): ToolCall | null {
  if (typeof fc.name !== 'string') return null;
  const id = typeof fc.id === 'string' && fc.id !== '' ? fc.id : `gemini:${i}:${k}`;
  return { id, name: fc.name, arguments: JSON.stringify(fc.args ?? {}) };
}

function modelContent(out: Normalized, i: number, parts: Obj[]): Pending {
  const content: ContentBlock[] = [];
  const calls: ToolCall[] = [];
  parts.forEach((part, k) => {
    const call = isObject(part.functionCall) ? callOf(part.functionCall, i, k) : null;
    if (call) calls.push(call);
    else content.push(blockOf(part));
  });
  const msg: Message = { role: 'assistant', content: content.length || !calls.length ? content : null };
  if (calls.length) msg.tool_calls = calls;
  out.messages.push(msg);
  out.slots.push({ kind: 'content', msg: i });
  return calls.map((call) => ({ call, answered: false }));
}

/** The call a functionResponse answers: by id when it names one, else the first open call of its name. */
function answeredCall(pending: Pending, fr: Obj): string | undefined {
  const byId = typeof fr.id === 'string' ? pending.find((p) => p.call.id === fr.id) : undefined;
  const hit = byId ?? pending.find((p) => !p.answered && p.call.name === fr.name);
  if (!hit) return undefined;
  hit.answered = true;
  return hit.call.id;
}

function userContent(out: Normalized, i: number, parts: Obj[], pending: Pending): void {
  // A run of parts that are not function responses becomes one user message.
  let group: ContentBlock[] = [];
  const flush = (): void => {
    if (!group.length) return;
    out.messages.push({ role: 'user', content: group });
    out.slots.push({ kind: 'content', msg: i });
    group = [];
  };
  parts.forEach((part, k) => {
    const fr = part.functionResponse;
    if (!isObject(fr)) return void group.push(blockOf(part));
    flush();
    const found = responseText(fr.response);
    if (!found) return;
    const id = answeredCall(pending, fr) ?? `gemini:${i}:${k}`;
    out.messages.push({ role: 'tool', tool_call_id: id, content: found.text });
    out.slots.push({ kind: 'function_response', msg: i, part: k, key: found.key });
  });
  flush();
}

export function normalizeGemini(body: Obj): Normalized {
  const out: Normalized = { messages: [], slots: [] };
  const contents = Array.isArray(body.contents) ? (body.contents as unknown[]) : [];
  let pending: Pending = [];
  contents.forEach((c, i) => {
    if (!isObject(c) || !Array.isArray(c.parts) || !c.parts.every(isObject)) return;
    // A content without a role is the user's (single-turn requests leave it out).
    if (c.role === 'model') pending = modelContent(out, i, c.parts);
    else if (c.role === 'user' || c.role === undefined) userContent(out, i, c.parts, pending);
  });
  return out;
}

function partsText(content: unknown): string {
  if (!isObject(content) || !Array.isArray(content.parts)) return '';
  return content.parts.map((p) => (isObject(p) && isPlainText(p) ? p.text : '')).join('');
}

/** The session's alias texts: `systemInstruction`'s text and the first user content's text. */
export function geminiHeads(body: Obj): { systemHead: string; firstUserText: string } {
  const contents = Array.isArray(body.contents) ? (body.contents as unknown[]) : [];
  const user = contents.find((c) => isObject(c) && (c.role === 'user' || c.role === undefined) && partsText(c) !== '');
  return { systemHead: partsText(body.systemInstruction), firstUserText: partsText(user) };
}

/**
 * Only a functionResponse's text is written: a string member of `response` as its own JSON string,
 * or the whole `response` value (it must stay an object: anything else goes in as `{"output":…}`).
 */
export function planGemini(index: RawIndex, slot: Slot, before: Message, after: Message): Plan | null {
  if (slot.kind !== 'function_response' || !sameEnvelope(before, after)) return null;
  if (typeof before.content !== 'string' || typeof after.content !== 'string') return null;
  const span = index.message(slot.msg);
  if (!span) return null;
  const path = ['parts', slot.part, 'functionResponse', 'response'];
  if (slot.key !== null) {
    const edit = stringEdit(index.text, spanAt(index.text, span, [...path, slot.key]), before.content, after.content);
    return edit ? { edits: [edit], inserted: 0 } : null;
  }
  const value = spanAt(index.text, span, path);
  if (!value || JSON.stringify(JSON.parse(index.text.slice(value.start, value.end))) !== before.content) return null;
  let next: unknown;
  try {
    next = JSON.parse(after.content);
  } catch {
    next = undefined;
  }
  const text = isObject(next) ? after.content : JSON.stringify({ output: after.content });
  return { edits: [{ start: value.start, end: value.end, text }], inserted: 0 };
}

/**
 * The expand tool may be added: function calling is left on automatic (no toolConfig mode, or
 * AUTO without a list of allowed names), and the request does not name an explicit cache, whose
 * tools the provider fixes (a request with `cachedContent` may not declare tools of its own).
 */
export function geminiAllowsInjection(body: Obj): boolean {
  if (body.cachedContent !== undefined) return false;
  const config = isObject(body.toolConfig) ? body.toolConfig.functionCallingConfig : undefined;
  if (config === undefined || config === null) return true;
  if (!isObject(config)) return false;
  const mode = config.mode;
  const auto = mode === undefined || (typeof mode === 'string' && mode.toUpperCase() === 'AUTO');
  return auto && config.allowedFunctionNames === undefined;
}
