// Realistic non-streaming provider responses (Anthropic Messages, OpenAI Chat Completions) and the
// request bodies they answer, for expand-loop and proxy tests.
import type { CallUpstream, ExpandHooks, UpstreamReply } from '../../libs/engine/src/expand/expand.types';
import { ANTHROPIC_MODEL, OPENAI_MODEL, type AnthropicBlock, type OpenAiCall } from './fake-upstream-sse';

export function anthropicMessage(blocks: AnthropicBlock[], usage: Record<string, number> = {}): Record<string, unknown> {
  return {
    id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
    type: 'message',
    role: 'assistant',
    model: ANTHROPIC_MODEL,
    content: blocks,
    stop_reason: blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: 2095,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 503,
      service_tier: 'standard',
      ...usage,
    },
  };
}

export function openAiCompletion(
  content: string | null,
  calls: OpenAiCall[] = [],
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number },
): Record<string, unknown> {
  const u = usage ?? { prompt_tokens: 1843, completion_tokens: 64, cached_tokens: 1024 };
  const message: Record<string, unknown> = { role: 'assistant', content, refusal: null, annotations: [] };
  if (calls.length) {
    message['tool_calls'] = calls.map((c, i) => ({
      id: c.id ?? `call_${i}DhGwnZ2Kq7sL1xY4bT0pR`,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.args) },
    }));
  }
  return {
    id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
    object: 'chat.completion',
    created: 1741569952,
    model: OPENAI_MODEL,
    choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length ? 'tool_calls' : 'stop' }],
    usage: {
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
      total_tokens: u.prompt_tokens + u.completion_tokens,
      prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_fc9f1d7035',
  };
}

/** An Anthropic request as an agent sends it: pretty-printed by the client, markers in a tool_result. */
export function anthropicRequestRaw(stream: boolean): string {
  return `{
  "model": "${ANTHROPIC_MODEL}",
  "max_tokens": 8192,
  "stream": ${stream},
  "system": [{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}],
  "tools": [
    {"name": "bash", "description": "Run a shell command", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
    {"name": "context_guru_expand", "description": "Retrieve the full original content replaced by a <<cg:HASH>> marker", "input_schema": {"type": "object", "properties": {"id": {"type": "string", "description": "the HASH from a marker"}}, "required": ["id"]}}
  ],
  "messages": [
    {"role": "user", "content": "Why does the build fail?"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "bash", "input": {"command": "npm run build"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "[older tool output masked; starts: > app@1.0.0 build > tsc -p .] <<cg:3f2a9c0d1e4b5a6c>> [full output: call context_guru_expand]"}]}
  ]
}
`;
}

export function openAiRequestRaw(stream: boolean): string {
  return `{"model":"${OPENAI_MODEL}","stream":${stream},${stream ? '"stream_options":{"include_usage":true},' : ''}"messages":[{"role":"system","content":"You are a coding agent."},{"role":"user","content":"Why does the build fail?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_build01","type":"function","function":{"name":"bash","arguments":"{\\"command\\":\\"npm run build\\"}"}}]},{"role":"tool","tool_call_id":"call_build01","content":"<<cg:3f2a9c0d1e4b5a6c>> [full output: call context_guru_expand]"}],"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}},{"type":"function","function":{"name":"context_guru_expand","description":"Retrieve the full original content replaced by a <<cg:HASH>> marker","parameters":{"type":"object","properties":{"id":{"type":"string","description":"the HASH from a marker"}},"required":["id"]}}}]}`;
}

/** An upstream that answers each call with the next scripted reply and records what it was sent. */
export function scriptedUpstream(replies: Array<() => UpstreamReply>): { call: CallUpstream; sent: string[] } {
  const sent: string[] = [];
  const call: CallUpstream = async (raw) => {
    const next = replies[sent.length];
    sent.push(raw);
    if (!next) throw new Error(`unexpected upstream call #${sent.length}`);
    return next();
  };
  return { call, sent };
}

/** A stash over a plain record that remembers which ids the loop reported as resolved. */
export function stashHooks(stash: Record<string, string>): ExpandHooks & { resolved: string[]; lookups: string[] } {
  const resolved: string[] = [];
  const lookups: string[] = [];
  return {
    resolved,
    lookups,
    resolve: async (id) => {
      lookups.push(id);
      return stash[id] ?? null;
    },
    onResolved: (id) => void resolved.push(id),
  };
}
