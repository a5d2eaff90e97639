// Anthropic messages are split so components see OpenAI shapes: each tool_result (or each text
// element of an array tool_result) is a synthetic tool message, the blocks between them one user
// message, and assistant tool_use blocks become tool_calls. Every normalized message remembers the
// exact raw value it came from, so a change lands on that value and its siblings keep their bytes.
import { isObject, type ContentBlock, type Message, type ToolCall } from '@context-guru/components';
import type { BodyText } from './body-text';
import type { Span } from './json-scan';
import type { RawIndex } from './raw-index';
import { elementAt, member, spanAt } from './text-scan';
import { toBlock, type Normalized } from './openai.wire';
import { deepEqual, memberInsert, planBlocks, sameEnvelope, stringEdit, type Plan } from './splice';
import type { Slot } from './wire.types';

function pushUser(out: Normalized, i: number, content: ContentBlock[], group: number[]): void {
  out.messages.push({ role: 'user', content });
  out.slots.push({ kind: 'blocks', msg: i, blocks: group });
}

function userBlocks(out: Normalized, i: number, blocks: Record<string, unknown>[]): void {
  // A run of non-result blocks becomes one user message: its blocks and where each came from.
  let group: number[] = [];
  let content: ContentBlock[] = [];
  blocks.forEach((blk, b) => {
    if (blk.type !== 'tool_result') {
      group.push(b);
      content.push(toBlock(blk));
      return;
    }
    if (group.length) pushUser(out, i, content, group);
    group = [];
    content = [];
    const id = typeof blk.tool_use_id === 'string' ? blk.tool_use_id : '';
    const c = blk.content;
    if (typeof c === 'string') {
      out.messages.push({ role: 'tool', tool_call_id: id, content: c });
      out.slots.push({ kind: 'result', msg: i, block: b });
    } else if (Array.isArray(c)) {
      // Each text element is its own tool output; images and documents stay out of sight.
      c.forEach((e, k) => {
        if (!isObject(e) || e.type !== 'text' || typeof e.text !== 'string') return;
        out.messages.push({ role: 'tool', tool_call_id: id, content: e.text });
        out.slots.push({ kind: 'result_part', msg: i, block: b, part: k });
      });
    }
  });
  if (group.length) pushUser(out, i, content, group);
}

function assistantBlocks(out: Normalized, i: number, blocks: Record<string, unknown>[]): void {
  const content: ContentBlock[] = [];
  const map: number[] = [];
  const calls: ToolCall[] = [];
  blocks.forEach((blk, b) => {
    if (blk.type === 'tool_use') {
      const call: ToolCall = {
        id: typeof blk.id === 'string' ? blk.id : '',
        name: typeof blk.name === 'string' ? blk.name : '',
        arguments: JSON.stringify(blk.input ?? {}),
      };
      if (isObject(blk.cache_control)) call.cache_control = blk.cache_control;
      calls.push(call);
      return;
    }
    content.push(toBlock(blk));
    map.push(b);
  });
  const msg: Message = { role: 'assistant', content: content.length || !calls.length ? content : null };
  if (calls.length) msg.tool_calls = calls;
  out.messages.push(msg);
  out.slots.push({ kind: 'blocks', msg: i, blocks: map });
}

export function normalizeAnthropic(body: Record<string, unknown>): Normalized {
  const out: Normalized = { messages: [], slots: [] };
  (body.messages as unknown[]).forEach((m, i) => {
    if (!isObject(m) || (m.role !== 'user' && m.role !== 'assistant')) return;
    const c = m.content;
    if (typeof c === 'string') {
      out.messages.push({ role: m.role, content: c });
      out.slots.push({ kind: 'text', msg: i });
      return;
    }
    if (!Array.isArray(c) || !c.every(isObject)) return;
    if (m.role === 'user') userBlocks(out, i, c);
    else assistantBlocks(out, i, c);
  });
  return out;
}

/** The one text block of a single-text-block message, which a plain-string rewrite may replace. */
function soleTextBlock(o: Message['content'], slot: Extract<Slot, { kind: 'blocks' }>): number | null {
  if (!Array.isArray(o) || o.length !== 1 || o[0]?.type !== 'text') return null;
  return slot.blocks[0] ?? null; // a slot without its block has no text block to replace
}

/**
 * A breakpoint cacheinject put on tool calls (nothing else about them changed) becomes a
 * `cache_control` inserted into the tool_use block each call came from (k-th call = k-th tool_use).
 */
function callBreakpoints(raw: BodyText, msgSpan: Span, rawMsg: Record<string, unknown>, before: Message, after: Message): Plan | null {
  const bc = before.tool_calls ?? [];
  const ac = after.tool_calls ?? [];
  const rawBlocks = Array.isArray(rawMsg.content) ? rawMsg.content : [];
  const uses = rawBlocks.flatMap((b, i) => (isObject(b) && b.type === 'tool_use' ? [i] : []));
  const content = member(raw, msgSpan.start, 'content');
  if (bc.length !== ac.length || uses.length !== ac.length || !content) return null;
  const plan: Plan = { edits: [], inserted: 0 };
  for (let k = 0; k < ac.length; k++) {
    const [was, now, use] = [bc[k], ac[k], uses[k]];
    if (!was || !now || use === undefined) return null; // the three lengths are equal
    const { cache_control: oc, ...o } = was;
    const { cache_control: nc, ...n } = now;
    if (!deepEqual(o, n)) return null;
    if (deepEqual(oc, nc)) continue;
    const rb = rawBlocks[use] as Record<string, unknown>;
    const span = elementAt(raw, content.start, use);
    if (oc !== undefined || !isObject(nc) || Object.hasOwn(rb, 'cache_control') || !span) return null;
    const ins = memberInsert(raw, span, 'cache_control', nc);
    if (!ins) return null;
    plan.edits.push({ ...ins, breakpoint: true });
    plan.inserted++;
  }
  return plan;
}

type AnthropicSlot = Extract<Slot, { kind: 'text' | 'result' | 'result_part' | 'blocks' }>;

const ANTHROPIC_KINDS = new Set<Slot['kind']>(['text', 'result', 'result_part', 'blocks']);

const isAnthropicSlot = (slot: Slot): slot is AnthropicSlot => ANTHROPIC_KINDS.has(slot.kind);

export function planAnthropic(index: RawIndex, body: Record<string, unknown>, slot: Slot, before: Message, after: Message): Plan | null {
  if (!isAnthropicSlot(slot)) return null;
  const raw = index.text;
  const msgSpan = index.message(slot.msg);
  const rawMsg = (body.messages as unknown[])[slot.msg];
  if (!msgSpan || !isObject(rawMsg)) return null;
  if (sameEnvelope(before, after)) return planContent(raw, msgSpan, rawMsg, slot, before, after);
  const sameRest = before.role === after.role && before.tool_call_id === after.tool_call_id && before.name === after.name;
  if (!sameRest || slot.kind !== 'blocks') return null;
  const calls = callBreakpoints(raw, msgSpan, rawMsg, before, after);
  const content = calls && planContent(raw, msgSpan, rawMsg, slot, before, after);
  return calls && content ? { edits: [...content.edits, ...calls.edits], inserted: content.inserted + calls.inserted } : null;
}

function planContent(
  raw: BodyText,
  msgSpan: Span,
  rawMsg: Record<string, unknown>,
  slot: AnthropicSlot,
  before: Message,
  after: Message,
): Plan | null {
  const n = after.content;
  const o = before.content;
  const single = (path: (string | number)[], expected: string): Plan | null => {
    if (typeof n !== 'string') return null;
    const edit = stringEdit(raw, spanAt(raw, msgSpan, path), expected, n);
    return edit ? { edits: [edit], inserted: 0 } : null;
  };
  switch (slot.kind) {
    case 'text':
      return typeof o === 'string' ? single(['content'], o) : null;
    case 'result':
      return typeof o === 'string' ? single(['content', slot.block, 'content'], o) : null;
    case 'result_part':
      return typeof o === 'string' ? single(['content', slot.block, 'content', slot.part, 'text'], o) : null;
    case 'blocks': {
      if (typeof n === 'string') {
        // A component that rewrote the text as a string: only expressible on a single text block,
        // whose other keys (cache_control included) keep their bytes.
        const b = soleTextBlock(o, slot);
        const text = Array.isArray(o) ? (o[0] as { text?: unknown }).text : undefined;
        return b === null || typeof text !== 'string' ? null : single(['content', b, 'text'], text);
      }
      if (deepEqual(o, n)) return { edits: [], inserted: 0 };
      const content = member(raw, msgSpan.start, 'content');
      if (!Array.isArray(n) || !Array.isArray(o) || !content || !Array.isArray(rawMsg.content)) return null;
      return planBlocks(raw, content, o, n, rawMsg.content, slot.blocks);
    }
  }
}
