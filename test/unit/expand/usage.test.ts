import { parseJsonUsage, parseSseUsage, parseUsage } from '../../../libs/engine/src/expand/usage';
import { usageFromJsonTail } from '../../../apps/gateway/src/expand/stream-relay';
import { anthropicMessage, openAiCompletion } from '../../support/fake-upstream-json';
import { anthropicTextSse, openAiTextSse } from '../../support/fake-upstream-sse';

describe('parseUsage', () => {
  it('maps Anthropic input tiers and output', () => {
    const msg = anthropicMessage([{ type: 'text', text: 'hi' }], {
      input_tokens: 12,
      cache_read_input_tokens: 4000,
      cache_creation_input_tokens: 900,
      output_tokens: 77,
    });
    expect(parseUsage('anthropic', msg)).toEqual({ fresh: 12, cacheRead: 4000, cacheWrite: 900, output: 77 });
  });

  it('does not double count the per-TTL cache-write breakdown, but uses it when it is all there is', () => {
    const both = {
      usage: {
        input_tokens: 3,
        cache_creation_input_tokens: 500,
        cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 300 },
        output_tokens: 1,
      },
    };
    expect(parseUsage('anthropic', both)?.cacheWrite).toBe(500);
    const splitOnly = {
      usage: { input_tokens: 3, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 300 }, output_tokens: 1 },
    };
    expect(parseUsage('anthropic', splitOnly)?.cacheWrite).toBe(300);
  });

  it('reads message.usage of an Anthropic message_start event', () => {
    expect(parseUsage('anthropic', { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } })).toEqual({
      fresh: 5,
      cacheRead: 0,
      cacheWrite: 0,
      output: 1,
    });
  });

  it('subtracts cached prompt tokens for OpenAI', () => {
    const c = openAiCompletion('ok', [], { prompt_tokens: 1843, completion_tokens: 64, cached_tokens: 1024 });
    expect(parseUsage('openai', c)).toEqual({ fresh: 819, cacheRead: 1024, cacheWrite: 0, output: 64 });
  });

  it('answers null for all-zero, null or missing usage', () => {
    expect(parseUsage('anthropic', { usage: { input_tokens: 0, output_tokens: 0 } })).toBeNull();
    expect(parseUsage('openai', { usage: null })).toBeNull();
    expect(parseUsage('openai', 'nope')).toBeNull();
    expect(parseJsonUsage('openai', '{not json')).toBeNull();
  });
});

describe('SSE usage', () => {
  it('takes the per-field max over message_start and message_delta (Anthropic)', () => {
    const sse = anthropicTextSse('Hello there.', {
      usage: { input_tokens: 321, cache_read_input_tokens: 15000, cache_creation_input_tokens: 40, output_tokens: 58 },
    });
    expect(parseSseUsage('anthropic', sse)).toEqual({ fresh: 321, cacheRead: 15000, cacheWrite: 40, output: 58 });
  });

  it('reads the final usage chunk and ignores the usage:null chunks (OpenAI)', () => {
    const sse = openAiTextSse('Hello there.', { usage: { prompt_tokens: 2000, completion_tokens: 9, cached_tokens: 1536 } });
    expect(sse).toContain('"usage":null');
    expect(parseSseUsage('openai', sse)).toEqual({ fresh: 464, cacheRead: 1536, cacheWrite: 0, output: 9 });
  });

  it('answers null for a stream without usage', () => {
    expect(parseSseUsage('openai', openAiTextSse('Hi', { usage: null }))).toBeNull();
  });
});

describe('usage from the tail of a large JSON body', () => {
  it('finds the last usage object even when it is followed by other members', () => {
    const tail =
      '…lots of content"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":2000,"cache_read_input_tokens":5},"x":1}';
    expect(usageFromJsonTail('anthropic', tail)).toEqual({ fresh: 10, cacheRead: 5, cacheWrite: 0, output: 2000 });
    expect(usageFromJsonTail('anthropic', 'no usage here')).toBeNull();
  });
});
