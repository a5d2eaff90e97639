// A neutral conversation as the client would send it in each dialect, in the corpus format of
// bench/real-corpus.ts: the request's fixed part (`base`), the messages, and `requestEnds` — the
// client's request k holds every message before the model's k-th answer, plus one last request
// when the session ends on a tool output. Model names and limits are bench defaults, not the
// original harness settings; only the conversation is the recording.
import type { Call, Conversation, Turn } from './conversation';

type Json = Record<string, unknown>;

interface DialectSession {
  base: Json;
  messages: Json[];
  requestEnds: number[];
}

/** An Anthropic tool_use id for a source id: kept when it is one, otherwise derived from it. */
const anthropicId = (id: string): string =>
  id.startsWith('toolu_') ? id : `toolu_${id.replace(/^call_/, '').replace(/[^A-Za-z0-9_-]/g, '')}`;

function ends(messages: Json[]): number[] {
  const out: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'assistant') out.push(i);
  });
  const last = messages[messages.length - 1];
  if (last && last.role !== 'assistant') out.push(messages.length);
  return out;
}

/** The first request must hold a user message: answers before the first user turn are dropped. */
function fromFirstUser(turns: Turn[]): Turn[] {
  const first = turns.findIndex((t) => t.kind === 'user');
  return first < 0 ? turns : turns.slice(first);
}

export function openaiSession(conv: Conversation): DialectSession {
  const messages: Json[] = [{ role: 'system', content: conv.system }];
  for (const t of fromFirstUser(conv.turns)) {
    if (t.kind === 'user') messages.push({ role: 'user', content: t.text });
    else if (t.kind === 'tool') messages.push({ role: 'tool', tool_call_id: t.callId, content: t.text });
    else {
      const m: Json = { role: 'assistant', content: t.text === '' && t.calls.length ? null : t.text };
      if (t.calls.length)
        m.tool_calls = t.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } }));
      messages.push(m);
    }
  }
  const base: Json = {
    model: 'gpt-4.1-2025-04-14',
    tools: conv.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })),
    tool_choice: 'auto',
    parallel_tool_calls: true,
    temperature: 0,
    max_completion_tokens: 8192,
  };
  return { base, messages, requestEnds: ends(messages) };
}

const toolUse = (c: Call): Json => ({ type: 'tool_use', id: anthropicId(c.id), name: c.name, input: c.input });

export function anthropicSession(conv: Conversation): DialectSession {
  const messages: Json[] = [];
  const userBlocks = (): Json[] => {
    const last = messages[messages.length - 1];
    if (last && last.role === 'user') return last.content as Json[];
    const blocks: Json[] = [];
    messages.push({ role: 'user', content: blocks });
    return blocks;
  };
  for (const t of fromFirstUser(conv.turns)) {
    if (t.kind === 'user') userBlocks().push({ type: 'text', text: t.text === '' ? '(empty message)' : t.text });
    else if (t.kind === 'tool') userBlocks().push({ type: 'tool_result', tool_use_id: anthropicId(t.callId), content: t.text });
    else {
      const blocks: Json[] = t.text.trim() === '' ? [] : [{ type: 'text', text: t.text }];
      blocks.push(...t.calls.map(toolUse));
      messages.push({ role: 'assistant', content: blocks.length ? blocks : [{ type: 'text', text: '(no content)' }] });
    }
  }
  const base: Json = {
    model: 'claude-sonnet-4-6',
    max_tokens: 8192,
    system: [{ type: 'text', text: conv.system, cache_control: { type: 'ephemeral' } }],
    tools: conv.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })),
  };
  return { base, messages, requestEnds: ends(messages) };
}
