// The fake upstream streams, the synthesized streams and the loop's final stream must be accepted
// by the official SDK stream parsers, which is what real clients run on our output.
import { runExpandLoop } from '../../../apps/gateway/src/expand/expand-loop';
import { aggregateSse } from '../../../apps/gateway/src/expand/sse-aggregate';
import { anthropicMessageToSse, openAiCompletionToSse } from '../../../apps/gateway/src/expand/sse-synthesize';
import { anthropicMessage, anthropicRequestRaw, openAiCompletion, scriptedUpstream, stashHooks } from '../../support/fake-upstream-json';
import { anthropicFinal, openAiFinal } from '../../support/sdk-parse';
import {
  SIGNATURE,
  anthropicExpandSse,
  anthropicTextSse,
  anthropicThinkingTextSse,
  expandToolUse,
  openAiExpandSse,
  openAiTextSse,
  readBody,
  sseReply,
} from '../../support/fake-upstream-sse';

describe('Anthropic SDK accepts', () => {
  it('the fake text, expand and thinking+text streams', async () => {
    const text = await anthropicFinal(anthropicTextSse('Hello — naïve ✓ 🚀'));
    expect(text.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello — naïve ✓ 🚀' })]);
    expect(text.usage.output_tokens).toBe(87);

    const expand = await anthropicFinal(anthropicExpandSse(['3f2a9c0d1e4b5a6c', 'aaaa']));
    expect(expand.stop_reason).toBe('tool_use');
    expect(expand.content.map((b) => (b.type === 'tool_use' ? [b.name, b.input] : b.type))).toEqual([
      ['context_guru_expand', { id: '3f2a9c0d1e4b5a6c' }],
      ['context_guru_expand', { id: 'aaaa' }],
    ]);

    const thinking = await anthropicFinal(anthropicThinkingTextSse('First, the log.', 'Answer.'));
    expect(thinking.content[0]).toEqual({ type: 'thinking', thinking: 'First, the log.', signature: SIGNATURE });
  });

  it('a synthesized stream, and rebuilds what our aggregation rebuilds', async () => {
    const message = anthropicMessage(
      [{ type: 'thinking', thinking: 'Hmm.', signature: SIGNATURE }, { type: 'text', text: 'Here — ✓' }, expandToolUse('aaaa')],
      { output_tokens: 42 },
    );
    const sse = anthropicMessageToSse(message);
    const sdk = await anthropicFinal(sse);
    expect(sdk.content).toEqual([
      { type: 'thinking', thinking: 'Hmm.', signature: SIGNATURE },
      expect.objectContaining({ type: 'text', text: 'Here — ✓' }),
      expect.objectContaining({ type: 'tool_use', name: 'context_guru_expand', input: { id: 'aaaa' } }),
    ]);
    expect(sdk.usage.output_tokens).toBe(42);
    expect(aggregateSse('anthropic', sse)?.['content']).toEqual(message['content']);
  });

  it('the final stream the loop sends after an expand round', async () => {
    const final = anthropicTextSse('The assertion compares a number to a string.');
    const upstream = scriptedUpstream([() => sseReply(final, { chunk: 3 })]);
    const reply = await runExpandLoop({
      dialect: 'anthropic',
      requestRaw: anthropicRequestRaw(true),
      advertised: true,
      first: sseReply(anthropicExpandSse(['3f2a9c0d1e4b5a6c']), { chunk: 3 }),
      call: upstream.call,
      hooks: stashHooks({ '3f2a9c0d1e4b5a6c': 'log' }),
    });
    const sdk = await anthropicFinal(await readBody(reply.body));
    expect(sdk.content).toEqual([expect.objectContaining({ type: 'text', text: 'The assertion compares a number to a string.' })]);
  });
});

describe('OpenAI SDK accepts', () => {
  it('the fake text and expand streams', async () => {
    const text = await openAiFinal(openAiTextSse('Hello — 日本語'));
    expect(text.choices[0]!.message.content).toBe('Hello — 日本語');
    expect(text.usage?.completion_tokens).toBe(64);

    const expand = await openAiFinal(openAiExpandSse(['3f2a9c0d1e4b5a6c', 'aaaa']));
    expect(expand.choices[0]!.finish_reason).toBe('tool_calls');
    expect(
      expand.choices[0]!.message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : c.type)),
    ).toEqual([
      ['call_Expand0Zq4WmT8', 'context_guru_expand', '{"id":"3f2a9c0d1e4b5a6c"}'],
      ['call_Expand1Zq4WmT8', 'context_guru_expand', '{"id":"aaaa"}'],
    ]);
  });

  it('a synthesized stream, agreeing with our aggregation', async () => {
    const completion = openAiCompletion('Let me look.', [{ id: 'call_1', name: 'bash', args: { command: 'ls' } }]);
    const sse = openAiCompletionToSse(completion);
    const sdk = await openAiFinal(sse);
    const ours = aggregateSse('openai', sse) as { choices: Array<{ message: Record<string, unknown> }> };
    expect(sdk.choices[0]!.message.content).toBe('Let me look.');
    expect(sdk.choices[0]!.message.tool_calls).toEqual(ours.choices[0]!.message['tool_calls']);
    expect(sdk.usage).toEqual(completion['usage']);
  });
});
