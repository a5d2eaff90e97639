// The harness-neutral form of a recorded agent session, and the readers that build it from each
// source format. A text-action harness (the model writes its command in a ``` fence) becomes a
// tool call of one `bash` tool; the observation that follows becomes that call's output verbatim.
import { createHash } from 'node:crypto';

type Json = Record<string, unknown>;

export interface Call {
  /** The source's call id, or one derived from the session and position (text actions). */
  id: string;
  name: string;
  input: Json;
}

export type Turn =
  { kind: 'user'; text: string } | { kind: 'assistant'; text: string; calls: Call[] } | { kind: 'tool'; callId: string; text: string };

interface ToolDef {
  name: string;
  description: string;
  parameters: Json;
}

export interface Conversation {
  system: string;
  turns: Turn[];
  tools: ToolDef[];
  /** How the reader mapped the source, for the session's description. */
  notes: string[];
  apiCalls?: number;
}

export type SourceFormat = 'mini-text' | 'mini-toolcall' | 'sweagent-text' | 'sweagent-toolcall';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string =>
  typeof v === 'string' ? v : Array.isArray(v) ? v.map((b) => (isObject(b) ? String(b.text ?? '') : String(b))).join('\n') : '';

const COMMAND_PARAMS = {
  type: 'object',
  properties: { command: { type: 'string', description: 'The shell command' } },
  required: ['command'],
};

/** Exactly one fenced block (```bash or a bare ```): the command, and the text around it. */
function fencedCommand(content: string): { command: string; rest: string } | undefined {
  const fences = [...content.matchAll(/```[A-Za-z_]*[ \t]*\n([\s\S]*?)\n```/g)];
  if (fences.length !== 1) return undefined;
  const [whole, command] = fences[0] ?? [];
  if (whole === undefined || command === undefined) return undefined;
  return { command, rest: content.replace(whole, '').trim() };
}

/** A stable id for a text action: the same source always yields the same ids. */
const derivedId = (seed: string, n: number): string =>
  createHash('sha256').update(`${seed}#${n}`).digest('base64url').replace(/[-_]/g, 'x').slice(0, 24);

/** Messages where the assistant writes a fenced command and the next user message is its output. */
function fromTextActions(messages: Json[], seed: string, tool: ToolDef, notes: string[]): Conversation {
  const [first, ...rest] = messages;
  const turns: Turn[] = [];
  let pending: string | undefined;
  let calls = 0;
  for (const m of rest) {
    const content = text(m.content);
    if (m.role === 'assistant') {
      const action = fencedCommand(content);
      pending = action ? `call_${derivedId(seed, calls++)}` : undefined;
      const callList = action && pending ? [{ id: pending, name: tool.name, input: { command: action.command } }] : [];
      turns.push({ kind: 'assistant', text: action ? action.rest : content, calls: callList });
    } else if (m.role === 'user' || m.role === 'tool') {
      if (pending) turns.push({ kind: 'tool', callId: pending, text: content });
      else turns.push({ kind: 'user', text: content });
      pending = undefined;
    }
  }
  return { system: text(first?.content), turns, tools: [tool], notes };
}

interface SourceCall {
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

function parseArguments(raw: unknown): Json {
  if (isObject(raw)) return raw;
  try {
    const v: unknown = JSON.parse(String(raw ?? '{}'));
    return isObject(v) ? v : { value: v };
  } catch {
    return { raw: String(raw) };
  }
}

/** OpenAI-style messages with native tool calls (tool results carry tool_call_id or tool_call_ids). */
function fromToolCalls(messages: Json[], notes: string[], describe: (name: string) => ToolDef): Conversation {
  const [first, ...rest] = messages;
  const turns: Turn[] = [];
  const tools = new Map<string, ToolDef>();
  for (const m of rest) {
    if (m.role === 'assistant') {
      const calls = ((m.tool_calls as SourceCall[] | undefined) ?? []).map((c) => ({
        id: String(c.id),
        name: String(c.function?.name),
        input: parseArguments(c.function?.arguments),
      }));
      for (const c of calls) if (!tools.has(c.name)) tools.set(c.name, describe(c.name));
      turns.push({ kind: 'assistant', text: text(m.content), calls });
    } else if (m.role === 'tool') {
      const id = m.tool_call_id ?? (Array.isArray(m.tool_call_ids) ? m.tool_call_ids[0] : undefined);
      turns.push({ kind: 'tool', callId: String(id), text: text(m.content) });
    } else if (m.role === 'user') {
      turns.push({ kind: 'user', text: text(m.content) });
    }
  }
  return { system: text(first?.content), turns, tools: [...tools.values()], notes };
}

const MINI_TEXT_TOOL: ToolDef = {
  name: 'bash',
  description:
    'Run one command in a fresh subshell of the task environment. (The mini-swe-agent 1.x harness has no function calling: the model wrote this command in a ```bash fence; the importer represents it as this tool call.)',
  parameters: COMMAND_PARAMS,
};

const SWEAGENT_TEXT_TOOL: ToolDef = {
  name: 'bash',
  description:
    'Run one command in the SWE-agent shell: ordinary shell commands plus the SWE-agent interface commands (open, goto, scroll_up, scroll_down, create, edit, search_dir, search_file, find_file, submit) documented in the system prompt. (The SWE-agent 0.x harness has no function calling: the model wrote this command in a ``` fence; the importer represents it as this tool call.)',
  parameters: {
    type: 'object',
    properties: { command: { type: 'string', description: 'The command (multi-line for edit)' } },
    required: ['command'],
  },
};

const miniToolcallTool = (): ToolDef => ({
  name: 'bash',
  description: 'Execute a bash command in the task environment.',
  parameters: COMMAND_PARAMS,
});

/** SWE-agent 1.x names its interface commands as tools; their schemas are not in the trajectory. */
const sweagentTool = (name: string): ToolDef => ({
  name,
  description: `The SWE-agent 1.x \`${name}\` command (its schema is not stored in the trajectory; the importer accepts any arguments).`,
  parameters: { type: 'object', properties: {}, additionalProperties: true },
});

/** The conversation a source file records, read per its format. */
export function readConversation(format: SourceFormat, raw: string, seed: string): Conversation {
  const doc = JSON.parse(raw) as unknown;
  const messages = (isObject(doc) ? (doc.messages ?? doc.history) : doc) as Json[];
  const info = isObject(doc) && isObject(doc.info) ? doc.info : {};
  const stats = isObject(info.model_stats) ? info.model_stats : {};
  const apiCalls = typeof stats.api_calls === 'number' ? stats.api_calls : undefined;
  let c: Conversation;
  if (format === 'mini-text') {
    c = fromTextActions(messages, seed, MINI_TEXT_TOOL, [
      'mini-swe-agent 1.x text actions: the ```bash command of each response became a `bash` tool call',
    ]);
  } else if (format === 'sweagent-text') {
    c = fromTextActions(messages, seed, SWEAGENT_TEXT_TOOL, [
      'SWE-agent 0.x text actions: the fenced command of each response became a `bash` tool call',
    ]);
  } else if (format === 'mini-toolcall') {
    c = fromToolCalls(messages, ['mini-swe-agent 2.x native tool calls, ids as in the source'], miniToolcallTool);
  } else {
    c = fromToolCalls(
      messages,
      ['SWE-agent 1.x function calling, ids as in the source; tool schemas synthesised from the call names'],
      sweagentTool,
    );
  }
  return { ...c, ...(apiCalls === undefined ? {} : { apiCalls }) };
}
