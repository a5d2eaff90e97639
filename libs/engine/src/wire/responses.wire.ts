// The OpenAI Responses API's `input` is a list of items, not messages. Components see them in the
// normalized (chat) shape: a message item is a message, a run of call items one assistant message
// with tool_calls, and each tool output item (or each input_text element of an array output) a tool
// message. Only tool outputs are ever written back, each into its own `output` string; reasoning,
// compaction and every item type we do not know have no normalized message at all, so nothing can
// touch them and their bytes (encrypted_content included) go upstream exactly as received.
import { isObject, type ContentBlock, type Message, type Role, type ToolCall } from '@context-guru/components';
import type { RawIndex } from './raw-index';
import { spanAt } from './text-scan';
import { sameEnvelope, stringEdit, type Plan } from './splice';
import type { Normalized } from './openai.wire';
import type { Slot } from './wire.types';

const ROLES: Record<string, Role> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant' };
const CALL_TYPES = new Set(['function_call', 'custom_tool_call']);
const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output']);

/** An item's type; an easy input message (`{role, content}`) has none and is a message. */
export function itemType(item: Record<string, unknown>): string {
  if (typeof item.type === 'string') return item.type;
  return typeof item.role === 'string' ? 'message' : '';
}

/** The call an item makes: a function call's JSON arguments, a custom tool call's free-form input. */
function callOf(item: Record<string, unknown>): ToolCall | null {
  if (typeof item.call_id !== 'string' || typeof item.name !== 'string') return null;
  const args = item.type === 'custom_tool_call' ? item.input : item.arguments;
  return { id: item.call_id, name: item.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) };
}

/**
 * Text parts read as chat text blocks, so components see what the model was told exactly as on the
 * chat route (the query a projection keeps lines for comes from them); other parts are opaque.
 * Message items are never written back: a change to one is discarded.
 */
function messageOf(item: Record<string, unknown>): Message | null {
  const role = typeof item.role === 'string' ? ROLES[item.role] : undefined;
  if (!role) return null;
  const c = item.content;
  if (typeof c === 'string') return { role, content: c };
  if (!Array.isArray(c) || !c.every(isObject)) return null;
  return { role, content: c.map(partOf) };
}

function partOf(part: Record<string, unknown>): ContentBlock {
  const text = (part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string';
  return text ? { type: 'text', text: part.text as string } : { ...part, type: String(part.type) };
}

function outputsOf(out: Normalized, item: Record<string, unknown>, i: number): void {
  const id = item.call_id;
  if (typeof id !== 'string') return;
  const o = item.output;
  if (typeof o === 'string') {
    out.messages.push({ role: 'tool', tool_call_id: id, content: o });
    out.slots.push({ kind: 'output', msg: i });
    return;
  }
  if (!Array.isArray(o)) return;
  // Each text element is its own tool output; images and files stay out of sight.
  o.forEach((part, k) => {
    if (!isObject(part) || part.type !== 'input_text' || typeof part.text !== 'string') return;
    out.messages.push({ role: 'tool', tool_call_id: id, content: part.text });
    out.slots.push({ kind: 'output_part', msg: i, part: k });
  });
}

export function normalizeResponses(body: Record<string, unknown>): Normalized {
  const out: Normalized = { messages: [], slots: [] };
  const items = Array.isArray(body.input) ? (body.input as unknown[]) : [];
  // The calls of the assistant message a run of call items is building (they answer together).
  let run: ToolCall[] | null = null;
  // The assistant's text just before (reasoning aside): its calls join it, one turn as on chat.
  let said: Message | null = null;
  items.forEach((item, i) => {
    const type = isObject(item) ? itemType(item) : '';
    const call = isObject(item) && CALL_TYPES.has(type) ? callOf(item) : null;
    if (call && run) return void run.push(call);
    run = null;
    if (type !== 'reasoning' && !call) said = null;
    if (!isObject(item)) return;
    if (call) {
      run = [call];
      if (said) said.tool_calls = run;
      else {
        out.messages.push({ role: 'assistant', content: null, tool_calls: run });
        out.slots.push({ kind: 'item', msg: i });
      }
      said = null;
    } else if (type === 'message') {
      const msg = messageOf(item);
      if (!msg) return;
      out.messages.push(msg);
      out.slots.push({ kind: 'item', msg: i });
      if (msg.role === 'assistant') said = msg;
    } else if (OUTPUT_TYPES.has(type)) {
      outputsOf(out, item, i);
    }
    // reasoning, compaction, item_reference, built-in tool calls, anything new: no message at all.
  });
  return out;
}

/**
 * Whether `added`, the items after the first `k` of `items`, normalize on their own exactly as they
 * do after them: a call item joins the call run just before it, or the assistant message before it
 * with only reasoning between, so such a prefix cannot be extended by normalizing `added` alone.
 */
export function responsesResumable(items: readonly unknown[], k: number, added: readonly unknown[]): boolean {
  const typeOf = (item: unknown): string => (isObject(item) ? itemType(item) : '');
  const j = added.findIndex((it) => typeOf(it) !== 'reasoning');
  if (j < 0 || !CALL_TYPES.has(typeOf(added[j]))) return true;
  if (j === 0 && CALL_TYPES.has(typeOf(items[k - 1]))) return false;
  let i = k - 1;
  while (i >= 0 && typeOf(items[i]) === 'reasoning') i--;
  const item = items[i];
  return !(isObject(item) && typeOf(item) === 'message' && messageOf(item)?.role === 'assistant');
}

/** Text of a message item's string content or of its input_text / output_text parts. */
function itemText(item: unknown): string {
  if (!isObject(item)) return '';
  const c = item.content;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c.map((p) => (isObject(p) && typeof p.text === 'string' && String(p.type).endsWith('_text') ? p.text : '')).join('');
}

/** The session's alias texts: `instructions` (or the first system item) and the first user item. */
export function responsesHeads(body: Record<string, unknown>): { systemHead: string; firstUserText: string } {
  const items = Array.isArray(body.input) ? (body.input as unknown[]) : [];
  const role = (r: readonly string[]) => items.find((it) => isObject(it) && itemType(it) === 'message' && r.includes(String(it.role)));
  const systemHead = typeof body.instructions === 'string' ? body.instructions : itemText(role(['system', 'developer']));
  const firstUserText = typeof body.input === 'string' ? body.input : itemText(role(['user']));
  return { systemHead, firstUserText };
}

/** Only a tool output's text is written, as a replacement of its own JSON string. */
export function planResponses(index: RawIndex, slot: Slot, before: Message, after: Message): Plan | null {
  if (!sameEnvelope(before, after) || typeof before.content !== 'string' || typeof after.content !== 'string') return null;
  const span = index.message(slot.msg);
  if (!span) return null;
  const path = slot.kind === 'output' ? ['output'] : slot.kind === 'output_part' ? ['output', slot.part, 'text'] : null;
  if (!path) return null;
  const edit = stringEdit(index.text, spanAt(index.text, span, path), before.content, after.content);
  return edit ? { edits: [edit], inserted: 0 } : null;
}
