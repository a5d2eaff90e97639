// Reads the model's tool calls out of a non-streaming response: the loop may only step in when
// every client-tool call is a context_guru_expand call; anything else belongs to the client.
import { EXPAND_TOOL_NAME } from '@context-guru/components';
import type { Dialect } from './expand.types';
import { field, isObject, parseJson, str } from './json-shape';

export { EXPAND_TOOL_NAME };

export interface ExpandCall {
  /** The provider's tool-call id (tool_use.id / tool_calls[].id) the result must answer. */
  callId: string;
  /** The stash HASH the model asked for ('' when the arguments carried none). */
  id: string;
}

export type CallScan =
  | { kind: 'none' }
  | { kind: 'other' }
  | { kind: 'expand'; calls: ExpandCall[] };

export function findExpandCalls(dialect: Dialect, response: unknown): CallScan {
  return dialect === 'anthropic' ? scanAnthropic(response) : scanOpenAi(response);
}

function scan(entries: Array<{ name: string | undefined; callId: string | undefined; id: string }>): CallScan {
  if (entries.length === 0) return { kind: 'none' };
  const calls: ExpandCall[] = [];
  for (const e of entries) {
    // An unnamed or id-less call cannot be answered by us, so it is the client's to see.
    if (e.name !== EXPAND_TOOL_NAME || !e.callId) return { kind: 'other' };
    calls.push({ callId: e.callId, id: e.id });
  }
  return { kind: 'expand', calls };
}

function scanAnthropic(response: unknown): CallScan {
  const content = field(response, 'content');
  if (!Array.isArray(content)) return { kind: 'none' };
  // Only `tool_use` is a client tool; server tools (server_tool_use, web search…) already ran.
  const entries = content
    .filter((b) => field(b, 'type') === 'tool_use')
    .map((b) => ({ name: str(field(b, 'name')), callId: str(field(b, 'id')), id: str(field(field(b, 'input'), 'id')) ?? '' }));
  return scan(entries);
}

function scanOpenAi(response: unknown): CallScan {
  const choices = field(response, 'choices');
  const message = Array.isArray(choices) ? field(choices[0], 'message') : undefined;
  if (!isObject(message)) return { kind: 'none' };
  // The legacy single function_call shape is a client tool we cannot answer.
  if (isObject(message['function_call'])) return { kind: 'other' };
  const toolCalls = message['tool_calls'];
  if (!Array.isArray(toolCalls)) return { kind: 'none' };
  const entries = toolCalls.map((c) => {
    const fn = field(c, 'function');
    const isFunction = field(c, 'type') === undefined || field(c, 'type') === 'function';
    const args = parseJson(str(field(fn, 'arguments')) ?? '');
    return { name: isFunction ? str(field(fn, 'name')) : undefined, callId: str(field(c, 'id')), id: str(field(args, 'id')) ?? '' };
  });
  return scan(entries);
}
