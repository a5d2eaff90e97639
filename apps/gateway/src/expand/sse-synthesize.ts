// Renders a complete (non-streaming) response as the SSE stream the provider would have sent, for
// a client that asked to stream but whose final answer arrived whole. The output follows the
// providers' event order exactly, so official SDK stream parsers accept it.
import { isObject, str, type JsonObject } from '@context-guru/engine';

function anthropicEvent(type: string, data: JsonObject): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** The empty shape a block opens with before its deltas fill it in. */
function blockSkeleton(block: JsonObject): JsonObject {
  switch (block['type']) {
    case 'text':
      return { type: 'text', text: '' };
    case 'thinking':
      return { type: 'thinking', thinking: '', signature: '' };
    case 'tool_use':
    case 'server_tool_use':
      return { ...block, input: {} };
    default:
      return block;
  }
}

function blockDeltas(block: JsonObject): JsonObject[] {
  switch (block['type']) {
    case 'text':
      return [{ type: 'text_delta', text: str(block['text']) ?? '' }];
    case 'thinking':
      return [
        { type: 'thinking_delta', thinking: str(block['thinking']) ?? '' },
        { type: 'signature_delta', signature: str(block['signature']) ?? '' },
      ];
    case 'tool_use':
    case 'server_tool_use': {
      const input = isObject(block['input']) ? block['input'] : {};
      return Object.keys(input).length === 0 ? [] : [{ type: 'input_json_delta', partial_json: JSON.stringify(input) }];
    }
    default:
      return [];
  }
}

export function anthropicMessageToSse(message: JsonObject): string {
  const usage = isObject(message['usage']) ? message['usage'] : {};
  const content = Array.isArray(message['content']) ? message['content'].filter(isObject) : [];
  const out: string[] = [
    anthropicEvent('message_start', {
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
    }),
  ];
  content.forEach((block, index) => {
    out.push(anthropicEvent('content_block_start', { index, content_block: blockSkeleton(block) }));
    for (const delta of blockDeltas(block)) out.push(anthropicEvent('content_block_delta', { index, delta }));
    out.push(anthropicEvent('content_block_stop', { index }));
  });
  out.push(
    anthropicEvent('message_delta', {
      delta: { stop_reason: message['stop_reason'] ?? null, stop_sequence: message['stop_sequence'] ?? null },
      usage: { output_tokens: usage['output_tokens'] ?? 0 },
    }),
  );
  out.push(anthropicEvent('message_stop', {}));
  return out.join('');
}

export function openAiCompletionToSse(completion: JsonObject): string {
  const base: JsonObject = {
    id: completion['id'],
    object: 'chat.completion.chunk',
    created: completion['created'],
    model: completion['model'],
  };
  if (completion['system_fingerprint'] !== undefined) base['system_fingerprint'] = completion['system_fingerprint'];
  const chunk = (choices: unknown[], extra: JsonObject = {}): string => `data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`;
  const choice = Array.isArray(completion['choices']) && isObject(completion['choices'][0]) ? completion['choices'][0] : {};
  const message = isObject(choice['message']) ? choice['message'] : {};
  const out: string[] = [chunk([{ index: 0, delta: { role: str(message['role']) ?? 'assistant', content: '' }, finish_reason: null }])];
  const text = str(message['content']);
  if (text) out.push(chunk([{ index: 0, delta: { content: text }, finish_reason: null }]));
  const refusal = str(message['refusal']);
  if (refusal) out.push(chunk([{ index: 0, delta: { refusal }, finish_reason: null }]));
  const calls = Array.isArray(message['tool_calls']) ? message['tool_calls'].filter(isObject) : [];
  calls.forEach((call, index) => {
    out.push(chunk([{ index: 0, delta: { tool_calls: [{ index, ...call }] }, finish_reason: null }]));
  });
  out.push(chunk([{ index: 0, delta: {}, finish_reason: choice['finish_reason'] ?? 'stop' }]));
  if (isObject(completion['usage'])) out.push(chunk([], { usage: completion['usage'] }));
  out.push('data: [DONE]\n\n');
  return out.join('');
}
