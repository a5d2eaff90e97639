// decode turns each dialect into OpenAI-shaped messages the components understand, and reads the
// request facts the proxy needs, without touching the body.
import { decodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { ANTHROPIC_HOSTILE, OPENAI_HOSTILE, PYTEST_FAIL } from './bodies.fixture';

describe('decodeRequest (openai)', () => {
  const view = decodeRequest('openai', OPENAI_HOSTILE);

  it('keeps the raw text and parses the body for reading', () => {
    expect(view.raw).toBe(OPENAI_HOSTILE);
    expect(view.body.model).toBe('gpt-4o');
    expect(view.stream).toBe(true);
  });

  it('normalizes one message per body message, developer read as system', () => {
    expect(view.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user', 'assistant']);
    expect(view.messages[0]!.content).toBe('You are a careful coding agent.');
    expect(view.messages[2]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', name: 'bash', arguments: '{"cmd":"pytest -q"}' }],
    });
    expect(view.messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: PYTEST_FAIL });
    expect(view.messages[4]!.content).toEqual([
      { type: 'text', text: 'and this screenshot' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
    expect(view.slots.map((s) => s.msg)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('reads system head, first user text and tool facts', () => {
    expect(view.systemHead).toBe('You are a careful coding agent.');
    expect(view.firstUserText).toBe('run the tests in ./shop');
    expect(view.toolsDeclared).toBe(true);
    expect(view.toolChoiceAllowsInjection).toBe(true);
    expect(view.expandToolDeclared).toBe(false);
    expect(view.hasMarkers).toBe(false);
    expect(view.breakpoints).toBe(0);
  });

  it('skips a malformed message instead of failing the request', () => {
    const raw =
      '{"messages":[{"role":"user","content":"hi"},{"role":"wizard","content":"x"},42,{"role":"tool","tool_call_id":"c","content":"out"}]}';
    const v = decodeRequest('openai', raw);
    expect(v.messages.map((m) => m.role)).toEqual(['user', 'tool']);
    expect(v.slots).toEqual([
      { kind: 'openai', msg: 0 },
      { kind: 'openai', msg: 3 },
    ]);
  });

  it('keeps a private copy the pipeline cannot mutate', () => {
    const v = decodeRequest('openai', OPENAI_HOSTILE);
    v.messages[3]!.content = 'mutated';
    expect(v.original[3]!.content).toBe(PYTEST_FAIL);
  });

  it('treats only an auto tool_choice as allowing injection', () => {
    const choice = (c: string) => decodeRequest('openai', `{"messages":[],"tool_choice":${c}}`).toolChoiceAllowsInjection;
    expect(choice('"auto"')).toBe(true);
    expect(choice('null')).toBe(true);
    expect(choice('"required"')).toBe(false);
    expect(choice('"none"')).toBe(false);
    expect(choice('{"type":"function","function":{"name":"bash"}}')).toBe(false);
  });
});

describe('decodeRequest (anthropic)', () => {
  const view = decodeRequest('anthropic', ANTHROPIC_HOSTILE);

  it('splits tool_result blocks into synthetic tool messages in block order', () => {
    expect(view.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'user', 'assistant']);
    expect(view.messages[2]).toEqual({ role: 'tool', tool_call_id: 'toolu_01', content: PYTEST_FAIL });
    expect(view.messages[3]!.content).toMatch(/^class Cart:/);
    expect(view.messages[4]).toEqual({ role: 'tool', tool_call_id: 'toolu_02', content: '(file truncated …)' });
    expect(view.messages[5]).toEqual({ role: 'user', content: [{ type: 'text', text: 'note: use Python 3.11' }] });
    expect(view.slots.slice(2, 6)).toEqual([
      { kind: 'result', msg: 2, block: 0 },
      { kind: 'result_part', msg: 2, block: 1, part: 0 },
      { kind: 'result_part', msg: 2, block: 1, part: 2 },
      { kind: 'blocks', msg: 2, blocks: [2] },
    ]);
  });

  it('lifts tool_use into tool_calls and keeps other assistant blocks opaque', () => {
    const a = view.messages[1]!;
    expect(a.tool_calls).toEqual([
      { id: 'toolu_01', name: 'Bash', arguments: '{"command":"pytest -q","timeout":120000}' },
      { id: 'toolu_02', name: 'Read', arguments: '{"file_path":"/home/dev/shop/cart.py"}' },
    ]);
    expect(a.content).toEqual([
      { type: 'thinking', thinking: 'Run pytest first.', signature: 'EqQBCkYIARgCIkB+/sig==' },
      { type: 'text', text: 'Running the tests.' },
    ]);
    expect(view.slots[1]).toEqual({ kind: 'blocks', msg: 1, blocks: [0, 1] });
  });

  it('keeps images in the user message as opaque blocks', () => {
    expect(view.messages[0]!.content).toEqual([
      { type: 'text', text: 'fix the failing test' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUg==' } },
    ]);
  });

  it('takes the system head from the first system text block and counts breakpoints', () => {
    expect(view.systemHead).toBe('You are Claude Code.');
    expect(view.firstUserText).toBe('fix the failing test');
    expect(view.breakpoints).toBe(2);
  });

  it('gives an assistant with only tool_use null content', () => {
    const raw =
      '{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}]}';
    expect(decodeRequest('anthropic', raw).messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 't1', name: 'Bash', arguments: '{}' }],
    });
  });

  it('reads a string system and an auto tool_choice', () => {
    const v = decodeRequest(
      'anthropic',
      '{"system":"Be brief.","tool_choice":{"type":"auto"},"messages":[{"role":"user","content":"hi"}]}',
    );
    expect(v.systemHead).toBe('Be brief.');
    expect(v.toolChoiceAllowsInjection).toBe(true);
    expect(decodeRequest('anthropic', '{"tool_choice":{"type":"any"},"messages":[]}').toolChoiceAllowsInjection).toBe(false);
    expect(decodeRequest('anthropic', '{"tool_choice":{"type":"tool","name":"Bash"},"messages":[]}').toolChoiceAllowsInjection).toBe(false);
  });
});

describe('breakpoint counting', () => {
  it('counts system, tools, message-level, content blocks, nested tool_result content and cachePoint', () => {
    const raw = JSON.stringify({
      system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 't', input_schema: {}, cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          cache_control: { type: 'ephemeral' },
          content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'b' }, { cachePoint: { type: 'default' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'x', content: [{ type: 'text', text: 'c', cache_control: { type: 'ephemeral' } }] },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'not an object', cache_control: 'ephemeral' }] },
      ],
    });
    expect(decodeRequest('anthropic', raw).breakpoints).toBe(6);
  });
});

describe('marker detection', () => {
  const anth = (system: string, messages: string, tools = '[]') =>
    decodeRequest('anthropic', `{"system":${system},"tools":${tools},"messages":${messages}}`);

  it('finds raw and \\u003c / \\u003e escaped markers in messages', () => {
    expect(anth('""', '[{"role":"user","content":"see <<cg:0123456789abcdef>>"}]').hasMarkers).toBe(true);
    expect(anth('""', String.raw`[{"role":"user","content":"see \u003c\u003Ccg:0123456789abcdef\u003E>"}]`).hasMarkers).toBe(true);
    expect(anth('""', '[{"role":"user","content":"see <<cg:>> and <cg:abc>"}]').hasMarkers).toBe(false);
  });

  it('finds a marker in system', () => {
    expect(anth('"prior <<cg:abc_DEF-1>> note"', '[]').hasMarkers).toBe(true);
  });

  it('ignores markers quoted elsewhere, such as the expand tool description', () => {
    const tools = '[{"name":"context_guru_expand","description":"replaced by a <<cg:HASH>> marker","input_schema":{}}]';
    const v = anth('""', '[{"role":"user","content":"hi"}]', tools);
    expect(v.hasMarkers).toBe(false);
    expect(v.expandToolDeclared).toBe(true);
    expect(decodeRequest('openai', '{"x":"<<cg:abc>>","messages":[]}').hasMarkers).toBe(false);
  });

  it('reports the summary sentinel as a placeholder but not as a marker', () => {
    const v = anth('""', String.raw`[{"role":"user","content":"earlier \u27eacg\u27eb"}]`);
    expect(v.hasMarkers).toBe(false);
    expect(v.hasPlaceholder).toBe(true);
    expect(anth('""', '[{"role":"user","content":"⟪cg⟫"}]').hasPlaceholder).toBe(true);
  });
});
