// The pipeline's message copies share their tool_calls array with the snapshot (cloneMessage):
// a component that changes a call assigns a new array. The pipeline must still see that change,
// revert it with the component, and never let it reach the run's input.
import { Pipeline, cloneMessage, type Component, type Message } from '@context-guru/components';
import { testCtx } from '../../support/ctx';

const input = (): Message[] => [
  { role: 'user', content: 'list the files' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'sh', arguments: '{"cmd":"ls"}' }] },
  { role: 'tool', tool_call_id: 'c1', content: 'a.txt\nb.txt' },
];

const renamer = (fail: boolean): Component => ({
  name: 'renamer',
  kind: 'reformat',
  run(messages) {
    const m = messages[1]!;
    m.tool_calls = (m.tool_calls ?? []).map((c) => ({ ...c, arguments: '{"cmd":"ls -la"}' }));
    if (fail) throw new Error('gave up');
    return {};
  },
});

describe('pipeline and shared tool calls', () => {
  it('sees a replaced calls array as a change and keeps the input intact', async () => {
    const messages = input();
    const before = structuredClone(messages);
    const result = await new Pipeline([renamer(false)]).run(messages, testCtx());
    expect(result.reports[0]?.changed).toEqual([1]);
    expect(result.messages[1]?.tool_calls?.[0]?.arguments).toBe('{"cmd":"ls -la"}');
    expect(messages).toEqual(before);
  });

  it('reverts a failed component’s calls with it', async () => {
    const messages = input();
    const result = await new Pipeline([renamer(true)]).run(messages, testCtx());
    expect(result.reports[0]?.reverted).toBe(true);
    expect(result.messages[1]?.tool_calls).toEqual(input()[1]?.tool_calls);
  });

  it('copies the message and its content blocks, not the calls', () => {
    const m: Message = { role: 'assistant', content: [{ type: 'text', text: 'x' }], tool_calls: [{ id: 'c', name: 'n', arguments: '{}' }] };
    const copy = cloneMessage(m);
    expect(copy).toEqual(m);
    expect(copy).not.toBe(m);
    expect(copy.content).not.toBe(m.content);
    expect((copy.content as unknown[])[0]).not.toBe((m.content as unknown[])[0]);
    expect(copy.tool_calls).toBe(m.tool_calls);
  });
});
