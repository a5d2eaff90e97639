// Reads the model's tool calls out of a (whole or rebuilt) response and tells the gateway's own
// context_guru_expand calls apart from the client's tools: the client must never see the former,
// and the latter are always the client's to answer.
import { EXPAND_TOOL_NAME, expandIdOf } from '@context-guru/components';
import type { Dialect, ExpandCall } from './expand.types';
import { field, isObject, parseJson, str } from './json-shape';
import { responsesEntries } from './responses-expand';
import { geminiEntries } from './gemini-expand';

export { EXPAND_TOOL_NAME, expandIdOf };

export interface CallSplit {
  /** Every context_guru_expand call, in response order. */
  expand: ExpandCall[];
  /** Client tool calls (tool_use / tool_calls entries that are not ours), including unnamed ones. */
  client: number;
  /** A legacy `function_call` (OpenAI): a client call we cannot split from the message. */
  legacy: boolean;
}

interface Entry {
  name: string | undefined;
  callId: string | undefined;
  id: string;
}

function split(entries: readonly Entry[], legacy = false): CallSplit {
  const out: CallSplit = { expand: [], client: 0, legacy };
  for (const e of entries) {
    // An id-less call cannot be answered by us, so it counts as the client's.
    if (e.name === EXPAND_TOOL_NAME && e.callId) out.expand.push({ callId: e.callId, id: expandIdOf(e.id) });
    else out.client++;
  }
  return out;
}

function anthropicEntries(response: unknown): Entry[] {
  const content = field(response, 'content');
  if (!Array.isArray(content)) return [];
  // Only `tool_use` is a client tool; server tools (server_tool_use, web search…) already ran.
  return content
    .filter((b) => field(b, 'type') === 'tool_use')
    .map((b) => ({ name: str(field(b, 'name')), callId: str(field(b, 'id')), id: str(field(field(b, 'input'), 'id')) ?? '' }));
}

/** The first choice's message of a chat completion, or undefined. */
export function openAiMessage(response: unknown): Record<string, unknown> | undefined {
  const choices = field(response, 'choices');
  const message = Array.isArray(choices) ? field(choices[0], 'message') : undefined;
  return isObject(message) ? message : undefined;
}

function openAiEntries(message: Record<string, unknown> | undefined): Entry[] {
  const toolCalls = message?.['tool_calls'];
  if (!Array.isArray(toolCalls)) return [];
  return toolCalls.map((c) => {
    const fn = field(c, 'function');
    const isFunction = field(c, 'type') === undefined || field(c, 'type') === 'function';
    const args = parseJson(str(field(fn, 'arguments')) ?? '');
    return { name: isFunction ? str(field(fn, 'name')) : undefined, callId: str(field(c, 'id')), id: str(field(args, 'id')) ?? '' };
  });
}

export function splitCalls(dialect: Dialect, response: unknown): CallSplit {
  if (dialect === 'anthropic') return split(anthropicEntries(response));
  if (dialect === 'responses') return split(responsesEntries(response));
  if (dialect === 'gemini') return split(geminiEntries(response));
  const message = openAiMessage(response);
  return split(openAiEntries(message), isObject(message?.['function_call']));
}

/** The loop may continue upstream: expand calls and nothing the client must answer. */
export function continuable(s: CallSplit): boolean {
  return s.expand.length > 0 && s.client === 0 && !s.legacy;
}

export function isExpandToolUse(block: unknown): boolean {
  return field(block, 'type') === 'tool_use' && field(block, 'name') === EXPAND_TOOL_NAME;
}

export function isExpandToolCall(call: unknown): boolean {
  const t = field(call, 'type');
  return (t === undefined || t === 'function') && field(field(call, 'function'), 'name') === EXPAND_TOOL_NAME;
}
