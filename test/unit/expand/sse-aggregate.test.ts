import { aggregateSse } from '../../../apps/gateway/src/expand/sse-aggregate';
import { splitCalls } from '../../../libs/engine/src/expand/expand-calls';
import {
  SIGNATURE,
  anthropicExpandSse,
  anthropicSse,
  anthropicTextSse,
  openAiExpandSse,
  openAiSse,
  openAiTextSse,
} from '../../support/fake-upstream-sse';

describe('Anthropic SSE aggregation', () => {
  it('rebuilds thinking (with its signature), text and tool_use input in block order', () => {
    const sse = anthropicSse(
      [
        { type: 'thinking', thinking: 'The build log was masked; I need the original to see the tsc error.', signature: SIGNATURE },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' },
        { type: 'text', text: 'Fetching the full build output — un momento ✓' },
        { type: 'tool_use', id: 'toolu_01Expand0', name: 'context_guru_expand', input: { id: '3f2a9c0d1e4b5a6c' } },
      ],
      { usage: { input_tokens: 50, cache_read_input_tokens: 9000, output_tokens: 120 } },
    );
    const msg = aggregateSse('anthropic', sse);
    expect(msg).toMatchObject({
      id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      type: 'message',
      role: 'assistant',
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 50, cache_read_input_tokens: 9000, output_tokens: 120 },
    });
    expect(msg?.['content']).toEqual([
      { type: 'thinking', thinking: 'The build log was masked; I need the original to see the tsc error.', signature: SIGNATURE },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' },
      { type: 'text', text: 'Fetching the full build output — un momento ✓' },
      { type: 'tool_use', id: 'toolu_01Expand0', name: 'context_guru_expand', input: { id: '3f2a9c0d1e4b5a6c' } },
    ]);
  });

  it('gives a tool_use with no input deltas an empty object', () => {
    const sse = anthropicSse([{ type: 'tool_use', id: 'toolu_1', name: 'get_time', input: {} }]);
    expect(aggregateSse('anthropic', sse)?.['content']).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'get_time', input: {} }]);
  });

  it('yields the same calls as the equivalent non-streaming message', () => {
    const msg = aggregateSse('anthropic', anthropicExpandSse(['aaaa', 'bbbb']));
    expect(splitCalls('anthropic', msg)).toEqual({
      expand: [
        { callId: 'toolu_01Expand0Q8ZbM3kHk9x', id: 'aaaa' },
        { callId: 'toolu_01Expand1Q8ZbM3kHk9x', id: 'bbbb' },
      ],
      client: 0,
      legacy: false,
    });
  });

  it('refuses truncated tool input, an error event, or a stream without message_start or blocks', () => {
    const sse = anthropicExpandSse(['aaaa']);
    const truncated = sse.slice(0, sse.lastIndexOf('event: content_block_delta'));
    expect(aggregateSse('anthropic', truncated)).toBeNull();
    expect(
      aggregateSse(
        'anthropic',
        `${sse}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`,
      ),
    ).toBeNull();
    expect(aggregateSse('anthropic', sse.slice(sse.indexOf('event: content_block_start')))).toBeNull();
    expect(aggregateSse('anthropic', anthropicSse([]))).toBeNull();
  });

  it('keeps the text of a plain answer whole', () => {
    expect(aggregateSse('anthropic', anthropicTextSse('Line one.\nLine two — done.'))?.['content']).toEqual([
      { type: 'text', text: 'Line one.\nLine two — done.' },
    ]);
  });
});

describe('OpenAI SSE aggregation', () => {
  it('rebuilds tool calls by index with their arguments concatenated, content null', () => {
    const c = aggregateSse('openai', openAiExpandSse(['aaaa', 'bbbb']));
    expect(c).toMatchObject({
      id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
      object: 'chat.completion',
      model: 'gpt-4o-2024-08-06',
      system_fingerprint: 'fp_eb9dce56a8',
      usage: { prompt_tokens: 1843, completion_tokens: 64 },
    });
    expect(c?.['choices']).toEqual([
      {
        index: 0,
        logprobs: null,
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_Expand0Zq4WmT8', type: 'function', function: { name: 'context_guru_expand', arguments: '{"id":"aaaa"}' } },
            { id: 'call_Expand1Zq4WmT8', type: 'function', function: { name: 'context_guru_expand', arguments: '{"id":"bbbb"}' } },
          ],
        },
      },
    ]);
  });

  it('concatenates content and keeps text and calls together', () => {
    const c = aggregateSse('openai', openAiSse('Let me check — 日本', [{ name: 'bash', args: { command: 'ls -la' } }]));
    const message = (c?.['choices'] as Array<{ message: Record<string, unknown> }>)[0]!.message;
    expect(message['content']).toBe('Let me check — 日本');
    expect(message['tool_calls']).toEqual([
      { id: 'call_0DhGwnZ2Kq7sL1xY4bT0pR', type: 'function', function: { name: 'bash', arguments: '{"command":"ls -la"}' } },
    ]);
    expect(aggregateSse('openai', openAiTextSse('hi', { usage: null }))?.['usage']).toBeUndefined();
  });

  it('refuses error payloads, several choices and streams without choices', () => {
    expect(aggregateSse('openai', 'data: {"error":{"message":"boom"}}\n\n')).toBeNull();
    const two = openAiTextSse('hi').replace(
      /"choices":\[\{"index":0,"delta":\{"content":"hi"\}/,
      '"choices":[{"index":1,"delta":{"content":"hi"}',
    );
    expect(two).not.toBe(openAiTextSse('hi'));
    expect(aggregateSse('openai', two)).toBeNull();
    expect(aggregateSse('openai', 'data: [DONE]\n\n')).toBeNull();
  });
});
