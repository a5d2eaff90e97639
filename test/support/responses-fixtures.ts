// The OpenAI Responses API in tests: Codex-shaped request bodies (instructions, a developer
// message, reasoning items with encrypted_content, function and custom tool calls, a compaction
// item, an item type nobody knows) and a scripted provider's answers, whole or as the event
// stream (`event:` + `data:` with type and sequence_number, as the API sends it).
import type { AgentStep } from './transcripts';
import { SYSTEM, TASK } from './transcripts';

const RESPONSES_MODEL = 'gpt-5-codex';

const RESPONSES_TOOLS = [
  ...['read_file', 'bash', 'http_get'].map((name) => ({
    type: 'function',
    name,
    description: `The ${name} tool.`,
    strict: false,
    parameters: { type: 'object', properties: { arg: { type: 'string' } } },
  })),
  {
    type: 'custom',
    name: 'apply_patch',
    description: 'Applies a patch.',
    format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' },
  },
  { type: 'web_search' },
];

/** A reasoning item as Codex replays it (store: false, include reasoning.encrypted_content). */
export function reasoningItem(n: number): Record<string, unknown> {
  return { type: 'reasoning', id: `rs_${n}`, summary: [], content: null, encrypted_content: `gAAAAB${'Zm9v'.repeat(8)}${n}==` };
}

/**
 * The input of turn `upto`: the developer and user messages, then per step a reasoning item, the
 * call and its output; step 1 (when present) is a custom tool call, and a compaction item and an
 * unknown item sit after step 0. Every item's bytes are fixed for a seed, so later turns repeat them.
 */
function responsesInput(steps: AgentStep[], upto: number): Array<Record<string, unknown>> {
  const input: Array<Record<string, unknown>> = [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions>workspace-write</permissions>' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: TASK }] },
  ];
  steps.slice(0, upto).forEach((s, i) => {
    input.push(reasoningItem(i));
    if (i === 1) {
      input.push({
        type: 'custom_tool_call',
        id: `ctc_${i}`,
        call_id: s.id,
        name: 'apply_patch',
        input: `*** Begin Patch\n${s.args.arg ?? ''}`,
      });
      input.push({ type: 'custom_tool_call_output', call_id: s.id, output: s.output });
    } else {
      input.push({ type: 'function_call', id: `fc_${i}`, call_id: s.id, name: s.tool, arguments: JSON.stringify(s.args) });
      input.push({ type: 'function_call_output', call_id: s.id, output: s.output });
    }
    if (i === 0) {
      input.push({ type: 'compaction', id: 'cmp_0', encrypted_content: 'Y29tcGFjdGVkIGhpc3Rvcnk=' });
      input.push({ type: 'future_item_kind', payload: { nested: [1, 2, 3] } });
    }
  });
  return input;
}

export function responsesTurn(steps: AgentStep[], upto: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: RESPONSES_MODEL,
    instructions: SYSTEM,
    input: responsesInput(steps, upto),
    tools: RESPONSES_TOOLS,
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: false,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'codex-session-0001',
    text_unknown_field: { kept: true },
    ...extra,
  };
}

export interface ResponsesUsage {
  input_tokens: number;
  cached: number;
  output_tokens: number;
}

function usageJson(u: ResponsesUsage): Record<string, unknown> {
  return {
    input_tokens: u.input_tokens,
    input_tokens_details: { cached_tokens: u.cached },
    output_tokens: u.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.input_tokens + u.output_tokens,
  };
}

export const textItem = (id: string, text: string) => ({
  type: 'message',
  id,
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
});

export const callItem = (id: string, callId: string, name: string, args: string) => ({
  type: 'function_call',
  id,
  status: 'completed',
  call_id: callId,
  name,
  arguments: args,
});

const DEFAULT_USAGE: ResponsesUsage = { input_tokens: 100, cached: 0, output_tokens: 10 };

/** A whole response with these output items. */
export function responseJson(id: string, output: unknown[], usage: ResponsesUsage = DEFAULT_USAGE): Record<string, unknown> {
  return { id, object: 'response', created_at: 1, status: 'completed', model: RESPONSES_MODEL, output, usage: usageJson(usage) };
}

/** The event stream of that response: each item added, its deltas, done, then response.completed. */
export function responseSse(id: string, output: Array<Record<string, unknown>>, usage: ResponsesUsage = DEFAULT_USAGE): string {
  let seq = 0;
  const events: string[] = [];
  const emit = (type: string, data: Record<string, unknown>) =>
    events.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const shell = { id, object: 'response', created_at: 1, model: RESPONSES_MODEL };
  emit('response.created', { response: { ...shell, status: 'in_progress', output: [] } });
  emit('response.in_progress', { response: { ...shell, status: 'in_progress', output: [] } });
  output.forEach((item, i) => {
    const itemId = String(item.id);
    if (item.type === 'message') {
      const text = (item.content as Array<{ text: string }>)[0]?.text ?? '';
      emit('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', content: [] } });
      emit('response.content_part.added', {
        item_id: itemId,
        output_index: i,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
      for (const piece of [text.slice(0, 5), text.slice(5)]) {
        if (piece) emit('response.output_text.delta', { item_id: itemId, output_index: i, content_index: 0, delta: piece });
      }
      emit('response.output_text.done', { item_id: itemId, output_index: i, content_index: 0, text });
      emit('response.content_part.done', {
        item_id: itemId,
        output_index: i,
        content_index: 0,
        part: { type: 'output_text', text, annotations: [] },
      });
    } else if (item.type === 'function_call') {
      emit('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', arguments: '' } });
      emit('response.function_call_arguments.delta', { item_id: itemId, output_index: i, delta: String(item.arguments) });
      emit('response.function_call_arguments.done', { item_id: itemId, output_index: i, arguments: item.arguments });
    } else {
      emit('response.output_item.added', { output_index: i, item });
    }
    emit('response.output_item.done', { output_index: i, item });
  });
  emit('response.completed', { response: { ...shell, status: 'completed', output, usage: usageJson(usage) } });
  return events.join('');
}
