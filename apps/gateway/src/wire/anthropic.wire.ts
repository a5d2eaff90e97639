// Anthropic messages are split so components see OpenAI shapes: each tool_result (or each text
// element of an array tool_result) is a synthetic tool message, the blocks between them one user
// message, and assistant tool_use blocks become tool_calls. Every normalized message remembers the
// exact raw value it came from, so a change lands on that value and its siblings keep their bytes.
import type { ContentBlock, Message, ToolCall } from '@context-guru/components';
import { member, spanAt, type RawIndex } from './json-scan';
import { toBlock, type Normalized } from './openai.wire';
import { isObject, planBlocks, sameEnvelope, stringEdit, type Plan } from './splice';
import type { Slot } from './wire.types';

function pushUser(out: Normalized, i: number, blocks: Record<string, unknown>[], group: number[]): void {
  out.messages.push({ role: 'user', content: group.map((b) => toBlock(blocks[b]!)) });
  out.slots.push({ kind: 'blocks', msg: i, blocks: [...group] });
}

function userBlocks(out: Normalized, i: number, blocks: Record<string, unknown>[]): void {
  let group: number[] = [];
  blocks.forEach((blk, b) => {
    if (blk.type !== 'tool_result') {
      group.push(b);
      return;
    }
    if (group.length) pushUser(out, i, blocks, group);
    group = [];
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
  if (group.length) pushUser(out, i, blocks, group);
}

function assistantBlocks(out: Normalized, i: number, blocks: Record<string, unknown>[]): void {
  const content: ContentBlock[] = [];
  const map: number[] = [];
  const calls: ToolCall[] = [];
  blocks.forEach((blk, b) => {
    if (blk.type === 'tool_use') {
      calls.push({
        id: typeof blk.id === 'string' ? blk.id : '',
        name: typeof blk.name === 'string' ? blk.name : '',
        arguments: JSON.stringify(blk.input ?? {}),
      });
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
  if (!Array.isArray(o) || o.length !== 1 || o[0]!.type !== 'text') return null;
  return slot.blocks[0]!;
}

export function planAnthropic(
  index: RawIndex,
  body: Record<string, unknown>,
  slot: Slot,
  before: Message,
  after: Message,
): Plan | null {
  if (!sameEnvelope(before, after) || slot.kind === 'openai') return null;
  const raw = index.raw;
  const msgSpan = index.message(slot.msg);
  const rawMsg = (body.messages as unknown[])[slot.msg];
  if (!msgSpan || !isObject(rawMsg)) return null;
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
      const content = member(raw, msgSpan.start, 'content');
      if (!Array.isArray(n) || !Array.isArray(o) || !content || !Array.isArray(rawMsg.content)) return null;
      return planBlocks(raw, content, o, n, rawMsg.content, slot.blocks);
    }
  }
}
