import { Pipeline, type ContentBlock, type Message } from '@context-guru/components';
import {
  MAX_BREAKPOINTS,
  cacheinjectComponent,
  prefixBoundary,
  visibleBreakpoints,
} from '../../../libs/components/src/reformat/cacheinject.component';
import { testCtx } from '../../support/ctx';

const make = (raw?: unknown) => cacheinjectComponent.create(cacheinjectComponent.options(raw, 'components.cacheinject'));
const text = (t: string): ContentBlock => ({ type: 'text', text: t });
const toolUse = (id: string, command: string): ContentBlock => ({ type: 'tool_use', id, name: 'bash', input: { command } });

function transcript(): Message[] {
  return [
    { role: 'user', content: [text('Why does `make test` fail on CI but not locally?')] },
    {
      role: 'assistant',
      content: [text('Checking the CI log.'), toolUse('toolu_1', 'gh run view 9040 --log-failed')],
      tool_calls: [{ id: 'toolu_1', name: 'bash', arguments: '{"command":"gh run view 9040 --log-failed"}' }],
    },
    { role: 'tool', tool_call_id: 'toolu_1', content: 'test (3.12)\tRun make test\tE   ModuleNotFoundError: No module named "tzdata"' },
  ];
}

const breakpointsIn = (messages: readonly Message[]) => visibleBreakpoints(messages);

describe('cacheinject', () => {
  it('adds only the cache_control key: no text changes, no token changes', async () => {
    const input = transcript();
    const result = await new Pipeline([make()]).run(input, testCtx({ provider: 'anthropic' }));
    const report = result.reports[0]!;
    expect(report.reverted).toBe(false);
    expect(report.changed).toEqual([1]);
    expect(report.tokensAfter).toBe(report.tokensBefore);
    const { cache_control, ...rest } = (result.messages[1]!.content as ContentBlock[])[1] as Record<string, unknown>;
    expect(cache_control).toEqual({ type: 'ephemeral' });
    expect(rest).toEqual(toolUse('toolu_1', 'gh run view 9040 --log-failed'));
    expect(result.messages[0]).toEqual(input[0]);
    expect(result.messages[2]).toEqual(input[2]);
  });

  it('writes a fresh block object rather than mutating the one it was given', async () => {
    const messages = transcript();
    const original = (messages[1]!.content as ContentBlock[])[1]!;
    await make().run(messages, testCtx({ provider: 'anthropic' }));
    expect('cache_control' in original).toBe(false);
    expect((messages[1]!.content as ContentBlock[])[1]).not.toBe(original);
  });

  it('puts the breakpoint on a new calls array: the pipeline input and its snapshot share the old one', async () => {
    const calls = [
      { id: 'toolu_1', name: 'bash', arguments: '{"command":"ls"}' },
      { id: 'toolu_2', name: 'bash', arguments: '{"command":"make test"}' },
    ];
    const input: Message[] = [
      { role: 'user', content: [text('Why does `make test` fail?')] },
      { role: 'assistant', content: [text('Looking.')], tool_calls: calls },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'FAILED tests/test_tz.py' },
    ];
    const before = structuredClone(input);
    const result = await new Pipeline([make()]).run(input, testCtx({ provider: 'anthropic' }));
    expect(result.reports[0]?.changed).toEqual([1]);
    expect(result.messages[1]?.tool_calls).toEqual([calls[0], { ...calls[1], cache_control: { type: 'ephemeral' } }]);
    expect(input).toEqual(before);
    expect(input[1]?.tool_calls).toBe(calls);
    expect(calls[1]).not.toHaveProperty('cache_control');
  });

  it('never lets the request carry more than four breakpoints', async () => {
    for (let existing = 0; existing <= MAX_BREAKPOINTS + 1; existing++) {
      for (const visible of [0, 1]) {
        const input = transcript();
        if (visible) (input[0]!.content as ContentBlock[])[0] = { ...text('Why?'), cache_control: { type: 'ephemeral' } };
        const result = await new Pipeline([make()]).run(input, testCtx({ provider: 'anthropic', existingBreakpoints: existing }));
        const added = breakpointsIn(result.messages) - breakpointsIn(input);
        expect(existing + visible + added).toBeLessThanOrEqual(Math.max(MAX_BREAKPOINTS, existing + visible));
        expect(added).toBe(existing + visible < MAX_BREAKPOINTS ? 1 : 0);
      }
    }
  });

  it('counts a Bedrock-style cachePoint as a breakpoint already present', () => {
    const messages = transcript();
    (messages[1]!.content as ContentBlock[]).push({ type: 'text', text: 'x', cachePoint: { type: 'default' } });
    expect(make().run(messages, testCtx({ provider: 'anthropic' }))).toEqual({ gates: { breakpoint_present: 1 } });
  });

  it('walks past a message whose last block cannot carry a breakpoint (thinking, empty text)', () => {
    const messages: Message[] = [
      { role: 'user', content: [text('Summarise the failing job.')] },
      { role: 'assistant', content: [text('Reading the log.'), toolUse('toolu_1', 'cat ci.log')] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'FAILED tests/test_tz.py::test_local - ZoneInfoNotFoundError' },
      { role: 'assistant', content: [text('It needs tzdata.'), { type: 'thinking', thinking: 'done', signature: 'sig' }] },
      { role: 'user', content: [text('ok')] },
    ];
    expect(prefixBoundary(messages)?.msg).toBe(1);
    (messages[3]!.content as ContentBlock[])[1] = text('');
    expect(prefixBoundary(messages)?.msg).toBe(1);
  });

  it('finds no candidate before the first assistant turn', () => {
    const messages: Message[] = [{ role: 'user', content: [text('Hello')] }];
    expect(make().run(messages, testCtx({ provider: 'anthropic' }))).toEqual({ gates: { no_block_content: 1 } });
  });

  it('rejects an unknown ttl naming the key', () => {
    expect(() => make({ ttl: '24h' })).toThrow('components.cacheinject.ttl');
  });
});
