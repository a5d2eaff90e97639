// What the scripted model reads from a request, the same for both dialects: the task prompt and
// every assistant tool-call round with the tool results that answered it. The fake provider
// decides its next step from this alone, so a request the gateway rewrote (markers, re-inserted
// expand exchanges) is read exactly as the provider would read it.
import type { Dialect, RecordedRequest } from '../fake-upstream';

interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface Round {
  calls: ToolCall[];
  /** Tool results answering `calls`, by call id, as text. */
  results: Map<string, string>;
}

export interface Conversation {
  dialect: Dialect;
  /** Text of the first user message (the agent's task prompt plus any reminders it prepends). */
  firstUserText: string;
  rounds: Round[];
  toolNames: string[];
  systemText: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Text of a content value: a string, or the text parts of a block / part array (nested tool results too). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isObj)
    .map((b) =>
      (b.type === 'text' || b.type === 'input_text' || b.type === 'output_text') && typeof b.text === 'string'
        ? b.text
        : b.type === 'tool_result'
          ? contentText(b.content)
          : '',
    )
    .join('');
}

function parseArgs(raw: unknown): Record<string, unknown> {
  if (isObj(raw)) return raw;
  if (typeof raw !== 'string') return {};
  try {
    const v: unknown = JSON.parse(raw);
    return isObj(v) ? v : {};
  } catch {
    return {};
  }
}

function toolNames(body: Obj): string[] {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isObj) : [];
  return tools.map((t) => (isObj(t.function) ? String(t.function.name) : String(t.name)));
}

function systemText(dialect: Dialect, body: Obj, messages: Obj[]): string {
  if (dialect === 'anthropic') return typeof body.system === 'string' ? body.system : contentText(body.system);
  return messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => contentText(m.content))
    .join('\n');
}

function anthropicRounds(messages: Obj[]): Round[] {
  const rounds: Round[] = [];
  for (const m of messages) {
    const blocks = Array.isArray(m.content) ? m.content.filter(isObj) : [];
    if (m.role === 'assistant') {
      const calls = blocks
        .filter((b) => b.type === 'tool_use')
        .map((b) => ({ id: String(b.id), name: String(b.name), args: parseArgs(b.input) }));
      if (calls.length) rounds.push({ calls, results: new Map() });
    } else if (m.role === 'user') {
      const last = rounds[rounds.length - 1];
      for (const b of blocks) if (b.type === 'tool_result' && last) last.results.set(String(b.tool_use_id), contentText(b.content));
    }
  }
  return rounds;
}

function openAiRounds(messages: Obj[]): Round[] {
  const rounds: Round[] = [];
  for (const m of messages) {
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length) {
      const calls = m.tool_calls.filter(isObj).map((c) => {
        const fn = isObj(c.function) ? c.function : {};
        return { id: String(c.id), name: String(fn.name), args: parseArgs(fn.arguments) };
      });
      rounds.push({ calls, results: new Map() });
    } else if (m.role === 'tool') {
      rounds[rounds.length - 1]?.results.set(String(m.tool_call_id), contentText(m.content));
    }
  }
  return rounds;
}

/** Responses items: a run of call items is one round, each output answers its call (text of a string or its parts). */
function responsesRounds(items: Obj[]): Round[] {
  const rounds: Round[] = [];
  let open: Round | null = null;
  for (const item of items) {
    if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      const call = {
        id: String(item.call_id),
        name: String(item.name),
        args: parseArgs(item.type === 'function_call' ? item.arguments : { input: item.input }),
      };
      if (!open) rounds.push((open = { calls: [], results: new Map() }));
      open.calls.push(call);
    } else if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      const text = typeof item.output === 'string' ? item.output : contentText(item.output);
      rounds.find((r) => r.calls.some((c) => c.id === item.call_id))?.results.set(String(item.call_id), text);
      open = null;
    } else if (item.type !== 'reasoning') open = null;
  }
  return rounds;
}

/** The Codex request: no chat messages, a list of items; the agent's system prompt is its first developer message. */
function readResponses(req: RecordedRequest): Conversation {
  const items = Array.isArray(req.body.input) ? req.body.input.filter(isObj) : [];
  const messages = items.filter((i) => i.type === 'message' || (i.type === undefined && typeof i.role === 'string'));
  const text = (roles: string[]) =>
    messages
      .filter((m) => roles.includes(String(m.role)))
      .map((m) => contentText(m.content))
      .join('\n');
  const instructions = typeof req.body.instructions === 'string' ? `${req.body.instructions}\n` : '';
  return {
    dialect: req.dialect,
    // Codex sends its environment context as a user message before the task: every user text counts.
    firstUserText: text(['user']),
    rounds: responsesRounds(items),
    toolNames: toolNames(req.body),
    systemText: instructions + text(['system', 'developer']),
  };
}

export function readConversation(req: RecordedRequest): Conversation {
  if (req.dialect === 'responses') return readResponses(req);
  const messages = Array.isArray(req.body.messages) ? req.body.messages.filter(isObj) : [];
  const firstUser = messages.find((m) => m.role === 'user');
  return {
    dialect: req.dialect,
    firstUserText: firstUser ? contentText(firstUser.content) : '',
    rounds: req.dialect === 'anthropic' ? anthropicRounds(messages) : openAiRounds(messages),
    toolNames: toolNames(req.body),
    systemText: systemText(req.dialect, req.body, messages),
  };
}
