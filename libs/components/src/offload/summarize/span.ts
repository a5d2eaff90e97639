// Where summarize may cut. The span starts at the first assistant turn after the task and ends just
// before an assistant turn, so in both dialects every tool call travels with its results, no result
// is orphaned, and (Anthropic) the cut falls between whole body messages. The head — system
// messages and the task's user turn — always stays verbatim.
import type { ContentBlock, Message, MessageOrigin } from '../../component';
import { sha256Hex } from '../../shared/hash';
import { InvariantError } from '../../shared/present';
import { messageTokens } from '../../shared/tokens';

export interface Span {
  /** First summarized index: the first assistant message after the first user message. */
  start: number;
  /** One past the last summarized index; messages[end] is an assistant message. */
  end: number;
}

/** The first assistant message after the first user message, or null when there is none. */
function spanStart(messages: readonly Message[]): number | null {
  const user = messages.findIndex((m) => m.role === 'user');
  if (user < 0) return null;
  const start = messages.findIndex((m, i) => i > user && m.role === 'assistant');
  return start < 0 ? null : start;
}

/** The largest cut in (start, limit] that lands on an assistant message (limit capped at the last index). */
function cutAt(messages: readonly Message[], start: number, limit: number): number | null {
  for (let e = Math.min(limit, messages.length - 1); e > start; e--) if (messages[e]?.role === 'assistant') return e;
  return null;
}

/**
 * The first normalized index of the client's newest keepLast messages. keep_last counts what the
 * client sent: an Anthropic user turn holding two tool_results and a text block is one message
 * there but three normalized ones, and counting those would summarize client messages the user
 * asked to keep. A client message with nothing normalized (tool results that are only images)
 * travels with the message before it, so that one is kept too.
 * @internal exported for tests
 */
export function tailStart(messages: readonly Message[], keepLast: number, origin?: MessageOrigin): number {
  if (keepLast <= 0) return messages.length;
  if (!origin || origin.of.length !== messages.length) return Math.max(0, messages.length - keepLast);
  const first = origin.count - keepLast;
  // The newest client message at or before `first` that has normalized messages: its first one.
  let from = 0;
  let client = -1;
  for (const [i, of] of origin.of.entries()) {
    if (of > first) break;
    if (of === client) continue;
    client = of;
    from = i;
  }
  return client < 0 ? 0 : from;
}

/** The span to summarize with at least the client's keep_last newest messages left after it, or null. */
export function planSpan(messages: readonly Message[], keepLast: number, origin?: MessageOrigin): Span | null {
  const start = spanStart(messages);
  if (start === null) return null;
  const end = cutAt(messages, start, tailStart(messages, keepLast, origin));
  return end === null ? null : { start, end };
}

/** Content without cache_control: clients move breakpoints between turns, the content stays. */
function canonicalContent(c: Message['content']): Message['content'] {
  if (!Array.isArray(c)) return c;
  return c.map((b) => {
    const { cache_control: _moved, ...rest } = b as ContentBlock & { cache_control?: unknown };
    return rest as ContentBlock;
  });
}

function canonical(m: Message): Message {
  const out: Message = { role: m.role, content: canonicalContent(m.content) };
  if (m.tool_calls) out.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  if (m.name !== undefined) out.name = m.name;
  return out;
}

/** messages[start, end): a span is planned inside the transcript, so one reaching past it is a bug. */
function spanOf(messages: readonly Message[], start: number, end: number): readonly Message[] {
  if (start < 0 || end > messages.length) throw new InvariantError(`span [${start}, ${end}) outside ${messages.length} messages`);
  return messages.slice(start, end);
}

/** Names a span for checkpoint matching (24 hex over each canonical message + NUL). */
export function spanHash(messages: readonly Message[], start: number, end: number): string {
  let acc = '';
  for (const m of spanOf(messages, start, end)) acc += `${JSON.stringify(canonical(m))}\u0000`;
  return sha256Hex(acc).slice(0, 24);
}

/** What the marker resolves to: the span's messages as JSON, one per line. */
export function spanStashText(messages: readonly Message[], start: number, end: number): string {
  const lines = spanOf(messages, start, end).map((m) => JSON.stringify(canonical(m)));
  return `[\n${lines.join(',\n')}\n]`;
}

export function rangeTokens(messages: readonly Message[], start: number, end: number): number {
  return spanOf(messages, start, end).reduce((n, m) => n + messageTokens(m), 0);
}
