// The validator says what a provider would refuse; it is the safety net run over every body the
// gateway emits, so it must both accept real traffic and name each violation.
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { ANTHROPIC_HOSTILE, OPENAI_HOSTILE } from './bodies.fixture';

type Obj = Record<string, unknown>;
const ephemeral = { type: 'ephemeral' };
const user = (content: unknown): Obj => ({ role: 'user', content });
const assistant = (content: unknown): Obj => ({ role: 'assistant', content });
const toolUse = (id: string): Obj => ({ type: 'tool_use', id, name: 'Bash', input: { command: 'ls' } });
const toolResult = (id: string, content: unknown = 'ok'): Obj => ({ type: 'tool_result', tool_use_id: id, content });

describe('validateProviderShape (anthropic)', () => {
  const check = (messages: Obj[], extra: Obj = {}) => validateProviderShape('anthropic', { messages, ...extra });

  it('accepts real Claude Code traffic', () => {
    expect(validateProviderShape('anthropic', JSON.parse(ANTHROPIC_HOSTILE))).toEqual([]);
    expect(
      check([
        user('hi'),
        assistant([toolUse('a'), toolUse('b')]),
        user([toolResult('b'), toolResult('a'), { type: 'text', text: 'go on' }]),
        assistant(''),
      ]),
    ).toEqual([]);
  });

  it('rejects an empty list, a leading assistant and a system role inside messages', () => {
    expect(check([])).toEqual(['messages: empty']);
    expect(check([assistant('x'), user('y')])).toEqual(['messages[0]: first message must have role "user", got "assistant"']);
    expect(check([{ role: 'system', content: 's' }, user('y')])).toEqual([
      'messages[0]: role "system" inside messages (the system prompt belongs in the top-level system field)',
      'messages[0]: first message must have role "user", got "system"',
    ]);
  });

  it('requires alternating roles and non-empty content', () => {
    expect(check([user('a'), user('b')])).toEqual(['messages[1]: role "user" follows the same role (roles must alternate)']);
    expect(check([user(''), assistant('x'), user([])])).toEqual(['messages[0]: empty content', 'messages[2]: empty content']);
  });

  it('requires every tool_use answered exactly once in the next user message', () => {
    expect(check([user('go'), assistant([toolUse('a'), toolUse('b')]), user([toolResult('a')])])).toEqual([
      'messages[1]: tool_use "b" has 0 tool_result blocks in messages[2] (exactly 1 required)',
    ]);
    expect(check([user('go'), assistant([toolUse('a')]), user([toolResult('a'), toolResult('a')])])).toEqual([
      'messages[1]: tool_use "a" has 2 tool_result blocks in messages[2] (exactly 1 required)',
    ]);
    expect(check([user('go'), assistant([toolUse('a')])])).toEqual([
      'messages[1]: tool_use "a" has 0 tool_result blocks in messages[2] (exactly 1 required)',
    ]);
  });

  it('rejects a tool_result without a tool_use in the previous assistant message', () => {
    expect(check([user('go'), assistant([toolUse('a')]), user([toolResult('a')]), assistant('ok'), user([toolResult('a')])])).toEqual([
      'messages[4]: tool_result "a" has no matching tool_use in messages[3]',
    ]);
  });

  it('rejects duplicate tool_use ids and blocks in the wrong role', () => {
    const msgs = [user('go'), assistant([toolUse('a')]), user([toolResult('a')]), assistant([toolUse('a')]), user([toolResult('a')])];
    expect(check(msgs)).toEqual(['messages[3]: duplicate tool_use id "a"']);
    expect(check([user([toolUse('x')])])).toContain('messages[0].content[0]: tool_use outside an assistant message');
  });

  it('caps cache breakpoints at 4 across system, tools and messages', () => {
    const text = (t: string) => ({ type: 'text', text: t, cache_control: ephemeral });
    const body = {
      system: [text('sys')],
      tools: [{ name: 'Bash', input_schema: { type: 'object' }, cache_control: ephemeral }],
      messages: [user([text('a')]), assistant([text('b')]), user([text('c')])],
    };
    expect(validateProviderShape('anthropic', body)).toEqual(['5 cache breakpoints across system, tools and messages (at most 4)']);
    body.messages[2] = user('c');
    expect(validateProviderShape('anthropic', body)).toEqual([]);
  });

  it('requires tools to carry a name and an input_schema, except versioned server tools', () => {
    expect(
      check([user('x')], {
        tools: [{ name: 'Bash' }, { description: 'nameless', input_schema: {} }, { type: 'bash_20250124', name: 'bash' }],
      }),
    ).toEqual(['tools[0] "Bash": missing input_schema', 'tools[1]: missing name']);
  });

  it('requires system to be a string or text blocks', () => {
    expect(check([user('x')], { system: [{ type: 'image' }] })).toEqual(['system: must be a string or an array of text blocks']);
  });
});

describe('validateProviderShape (openai)', () => {
  const check = (messages: Obj[]) => validateProviderShape('openai', { messages });
  const call = (...ids: string[]): Obj => ({
    role: 'assistant',
    content: null,
    tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'bash', arguments: '{}' } })),
  });
  const tool = (id: string): Obj => ({ role: 'tool', tool_call_id: id, content: 'out' });

  it('accepts real traffic and parallel calls answered in any order', () => {
    expect(validateProviderShape('openai', JSON.parse(OPENAI_HOSTILE))).toEqual([]);
    expect(check([{ role: 'user', content: 'go' }, call('a', 'b'), tool('b'), tool('a'), { role: 'assistant', content: 'done' }])).toEqual(
      [],
    );
  });

  it('requires each call answered before the next non-tool message', () => {
    expect(check([{ role: 'user', content: 'go' }, call('a', 'b'), tool('a'), { role: 'user', content: 'and?' }])).toEqual([
      'messages[1]: tool_call "b" has no tool message answering it',
    ]);
    expect(check([{ role: 'user', content: 'go' }, call('a')])).toEqual(['messages[1]: tool_call "a" has no tool message answering it']);
  });

  it('rejects orphan and duplicate tool messages', () => {
    expect(check([{ role: 'user', content: 'go' }, tool('z')])).toEqual([
      'messages[1]: tool message "z" does not answer a preceding tool_call',
    ]);
    expect(check([{ role: 'user', content: 'go' }, call('a'), tool('a'), tool('a')])).toEqual([
      'messages[3]: tool_call "a" answered more than once',
    ]);
    expect(check([{ role: 'user', content: 'go' }, call('a'), { role: 'user', content: 'x' }, tool('a')])).toEqual([
      'messages[1]: tool_call "a" has no tool message answering it',
      'messages[3]: tool message "a" does not answer a preceding tool_call',
    ]);
  });

  it('rejects invalid roles and non-object bodies', () => {
    expect(check([{ role: 'robot', content: 'x' }])).toEqual(['messages[0]: invalid role "robot"']);
    expect(validateProviderShape('openai', [])).toEqual(['body: not a JSON object']);
    expect(validateProviderShape('openai', { messages: 'x' })).toEqual(['messages: missing or not an array']);
  });
});
