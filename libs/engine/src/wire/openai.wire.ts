// OpenAI chat messages map one-to-one onto the normalized model; write-back only ever touches a
// message's `content` value, so role, tool_calls, names and unknown fields keep their bytes.
import { isObject, type ContentBlock, type Message, type Role, type ToolCall } from '@context-guru/components';
import type { RawIndex } from './raw-index';
import { member } from './text-scan';
import { planBlocks, sameEnvelope, stringEdit, type Plan } from './splice';
import type { Slot } from './wire.types';

const ROLES: Record<string, Role> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
  tool: 'tool',
};

export interface Normalized {
  messages: Message[];
  slots: Slot[];
}

/** Text parts become TextBlocks (keeping an object cache_control); any other part is carried opaquely. */
export function toBlock(part: Record<string, unknown>): ContentBlock {
  if (part.type === 'text' && typeof part.text === 'string') {
    const cc = part.cache_control;
    return isObject(cc) ? { type: 'text', text: part.text, cache_control: cc } : { type: 'text', text: part.text };
  }
  return { ...part, type: String(part.type) };
}

function toolCalls(v: unknown): ToolCall[] | null {
  if (!Array.isArray(v)) return null;
  const out: ToolCall[] = [];
  for (const c of v) {
    if (!isObject(c) || !isObject(c.function)) return null;
    const { name, arguments: args } = c.function;
    if (typeof c.id !== 'string' || typeof name !== 'string') return null;
    out.push({ id: c.id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) });
  }
  return out;
}

/** One normalized message per well-formed body message; a malformed one is skipped and keeps its bytes. */
function normalizeOne(m: unknown): Message | null {
  if (!isObject(m) || typeof m.role !== 'string') return null;
  const role = ROLES[m.role];
  if (!role) return null;
  let content: Message['content'];
  if (typeof m.content === 'string') content = m.content;
  else if (m.content === null || m.content === undefined) content = null;
  else if (Array.isArray(m.content) && m.content.every(isObject)) content = m.content.map(toBlock);
  else return null;
  const out: Message = { role, content };
  if (m.tool_calls !== undefined) {
    const calls = toolCalls(m.tool_calls);
    if (!calls) return null;
    out.tool_calls = calls;
  }
  if (typeof m.tool_call_id === 'string') out.tool_call_id = m.tool_call_id;
  if (typeof m.name === 'string') out.name = m.name;
  return out;
}

export function normalizeOpenAI(body: Record<string, unknown>): Normalized {
  const messages: Message[] = [];
  const slots: Slot[] = [];
  const list = body.messages as unknown[];
  list.forEach((m, i) => {
    const msg = normalizeOne(m);
    if (!msg) return;
    messages.push(msg);
    slots.push({ kind: 'openai', msg: i });
  });
  return { messages, slots };
}

/** A text-only parts array can become a plain string; parts with any other key (cache_control…) cannot. */
function plainTextParts(parts: unknown): boolean {
  return (
    Array.isArray(parts) &&
    parts.every((p) => isObject(p) && p.type === 'text' && typeof p.text === 'string' && Object.keys(p).length === 2)
  );
}

export function planOpenAI(
  index: RawIndex,
  body: Record<string, unknown>,
  slot: Extract<Slot, { kind: 'openai' }>,
  before: Message,
  after: Message,
): Plan | null {
  if (!sameEnvelope(before, after)) return null;
  const raw = index.text;
  const msgSpan = index.message(slot.msg);
  const rawMsg = (body.messages as unknown[])[slot.msg];
  if (!msgSpan || !isObject(rawMsg)) return null;
  const content = member(raw, msgSpan.start, 'content');
  if (!content) return null;
  const o = before.content;
  const n = after.content;
  if (typeof n === 'string' && (typeof o === 'string' || o === null)) {
    const edit = stringEdit(raw, content, o, n);
    return edit ? { edits: [edit], inserted: 0 } : null;
  }
  if (typeof n === 'string' && Array.isArray(o)) {
    if (!plainTextParts(rawMsg.content)) return null;
    return { edits: [{ start: content.start, end: content.end, text: JSON.stringify(n) }], inserted: 0 };
  }
  if (Array.isArray(n) && Array.isArray(o) && Array.isArray(rawMsg.content)) {
    return planBlocks(
      raw,
      content,
      o,
      n,
      rawMsg.content,
      o.map((_, j) => j),
    );
  }
  return null;
}
