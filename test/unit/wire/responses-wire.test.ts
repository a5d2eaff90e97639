// The Responses wire: what is read from `input` items, what may be rewritten (tool outputs only,
// each in place), what never is (reasoning, compaction, unknown items, messages), and what the
// shape validator refuses.
import type { Message } from '@context-guru/components';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { resolveSessionKey } from '../../../libs/engine/src/wire/session-key';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';

const body = {
  model: 'gpt-5-codex',
  instructions: 'Be careful.',
  input: [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'sandbox: workspace-write' }] },
    { role: 'user', content: 'fix the tests' },
    { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAAB\u003cnot for us\u003e' },
    { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
    { type: 'function_call', call_id: 'c2', name: 'exec_command', arguments: '{"cmd":"cat a"}' },
    { type: 'function_call_output', call_id: 'c1', output: 'a\nb\n' },
    {
      type: 'function_call_output',
      call_id: 'c2',
      output: [
        { type: 'input_text', text: 'part one' },
        { type: 'input_image', image_url: 'data:x' },
        { type: 'input_text', text: 'part two' },
      ],
    },
    { type: 'custom_tool_call', call_id: 'c3', name: 'apply_patch', input: '*** Begin Patch' },
    { type: 'custom_tool_call_output', call_id: 'c3', output: 'Done!' },
    { type: 'compaction', encrypted_content: 'Y29tcGFjdA==' },
    { type: 'brand_new_item', x: [1, { y: 2 }] },
  ],
  tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }, { type: 'web_search' }],
  tool_choice: 'auto',
  prompt_cache_key: 'thread-42',
};
const raw = JSON.stringify(body, null, 1);

const rewrite = (messages: Message[], at: number, content: string): Message[] => messages.map((m, i) => (i === at ? { ...m, content } : m));

describe('decoding a Responses body', () => {
  const view = decodeRequest('responses', raw);

  it('reads messages, runs of calls and each tool output; opaque items have no message', () => {
    expect(view.messages.map((m) => [m.role, m.tool_calls?.map((c) => c.id) ?? m.tool_call_id ?? null])).toEqual([
      ['system', null],
      ['user', null],
      ['assistant', ['c1', 'c2']],
      ['tool', 'c1'],
      ['tool', 'c2'],
      ['tool', 'c2'],
      ['assistant', ['c3']],
      ['tool', 'c3'],
    ]);
    expect(view.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['a\nb\n', 'part one', 'part two', 'Done!']);
    expect(view.systemHead).toBe('Be careful.');
    expect(view.firstUserText).toBe('fix the tests');
  });

  it('reads an assistant text and the calls after it (reasoning between) as one turn, text parts as text', () => {
    const turn = decodeRequest(
      'responses',
      JSON.stringify({
        input: [
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Running it.', annotations: [] }] },
          { type: 'reasoning', id: 'rs_2', summary: [] },
          { type: 'function_call', call_id: 'c7', name: 'exec_command', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c7', output: 'ok' },
        ],
      }),
    );
    expect(turn.messages).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Running it.' }],
        tool_calls: [{ id: 'c7', name: 'exec_command', arguments: '{}' }],
      },
      { role: 'tool', tool_call_id: 'c7', content: 'ok' },
    ]);
  });

  it('names the session by prompt_cache_key, after the gateway header', () => {
    expect(resolveSessionKey(view, undefined, 't')).toBe('t:thread-42');
    expect(resolveSessionKey(view, 'mine', 't')).toBe('t:mine');
    const bare = decodeRequest('responses', JSON.stringify({ ...body, prompt_cache_key: undefined }));
    expect(resolveSessionKey(bare, undefined, 't', 'hdr-1')).toBe('t:hdr-1');
  });

  it('refuses an input that is neither a string nor items', () => {
    expect(() => decodeRequest('responses', '{"input":{"a":1}}')).toThrow(/`input` must be a string or an array/);
    expect(decodeRequest('responses', '{"input":"hello"}').firstUserText).toBe('hello');
  });
});

describe('encoding a Responses body', () => {
  const view = decodeRequest('responses', raw);

  it('writes a rewritten tool output (string and array part) in place; every other byte stays', () => {
    let out = rewrite(view.messages, 3, 'short');
    out = rewrite(out, 5, 'two, shorter');
    const r = encodeRequest(view, out, { injectExpand: false });
    expect(r.discarded).toEqual([]);
    const expected = raw.replace('"output": "a\\nb\\n"', '"output": "short"').replace('"text": "part two"', '"text": "two, shorter"');
    expect(r.raw).toBe(expected);
  });

  it('discards a change to anything that is not a tool output', () => {
    const r = encodeRequest(view, rewrite(view.messages, 1, 'another task'), { injectExpand: false });
    expect(r.discarded).toEqual([1]);
    expect(r.raw).toBe(raw);
  });

  it('discards a summary that would part a call from its output (the provider would refuse the rebuilt items)', () => {
    // Drops the user turn, the c1/c2 call turn and c1's output, keeps c2's: c2 would answer nothing.
    const out: Message[] = [view.messages[0]!, { role: 'user', content: 'summary' }, ...view.messages.slice(4)];
    const r = encodeRequest(view, out, { injectExpand: false });
    expect(r.raw).toBe(raw);
    expect(r.discarded.length).toBeGreaterThan(0);
  });

  it('appends the expand tool last, flat, once', () => {
    const r = encodeRequest(view, view.messages, { injectExpand: true });
    const tools = (JSON.parse(r.raw) as { tools: unknown[] }).tools;
    expect(tools.at(-1)).toEqual({
      type: 'function',
      name: 'context_guru_expand',
      description: expect.any(String),
      parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      strict: false,
    });
    expect(r.raw.startsWith(raw.slice(0, raw.indexOf('"tools"')))).toBe(true);
    expect(decodeRequest('responses', r.raw).expandToolDeclared).toBe(true);
  });
});

describe('the Responses shape validator', () => {
  it('accepts the body', () => {
    expect(validateProviderShape('responses', body)).toEqual([]);
  });

  it.each([
    ['an output without its call', [{ type: 'function_call_output', call_id: 'zz', output: 'x' }], /answers no function_call/],
    ['a call without its output', [{ type: 'function_call', call_id: 'c9', name: 'f', arguments: '{}' }], /has no output answering it/],
    [
      'a call answered twice',
      [
        { type: 'function_call', call_id: 'c9', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c9', output: 'x' },
        { type: 'function_call_output', call_id: 'c9', output: 'y' },
      ],
      /answered more than once/,
    ],
    ['arguments that are not a string', [{ type: 'function_call', call_id: 'c9', name: 'f', arguments: {} }], /arguments must be a string/],
    ['a bad role', [{ type: 'message', role: 'tool', content: 'x' }], /invalid role/],
  ])('refuses %s', (_what, input, problem) => {
    const problems = validateProviderShape('responses', { ...body, input });
    expect(problems.join('\n')).toMatch(problem);
  });

  it('accepts an output whose call the provider stored (previous_response_id)', () => {
    const input = [{ type: 'function_call_output', call_id: 'zz', output: 'x' }];
    expect(validateProviderShape('responses', { ...body, input, previous_response_id: 'resp_1' })).toEqual([]);
  });

  it('refuses duplicate tool names (the expand tool twice)', () => {
    const tool = { type: 'function', name: 'context_guru_expand', parameters: { type: 'object' } };
    expect(validateProviderShape('responses', { ...body, tools: [tool, tool] })).toEqual([
      'tools[1]: duplicate tool name "context_guru_expand"',
    ]);
  });
});
