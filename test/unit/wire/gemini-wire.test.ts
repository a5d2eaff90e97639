// The Gemini wire: what is read from `contents` (model turns, function calls, function responses,
// opaque parts), what may be rewritten (a functionResponse's text only, in place), what never is
// (thought parts and signatures, inline data, model text, every top-level field), where the expand
// tool goes, and what the shape validator refuses.
import type { Message } from '@context-guru/components';
import { expandToolJson } from '../../../libs/engine/src/wire/expand-tool';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { resolveSessionKey } from '../../../libs/engine/src/wire/session-key';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';

const SIGNATURE = 'CiQB0e2Kb+/sig\u003d\u003d';
const body = {
  contents: [
    { role: 'user', parts: [{ text: 'This is the Gemini CLI.' }, { text: 'fix the tests' }] },
    {
      role: 'model',
      parts: [
        { text: 'thinking about it', thought: true },
        { text: 'Listing first.', thoughtSignature: SIGNATURE },
        { functionCall: { name: 'run_shell_command', args: { command: 'ls' } }, thoughtSignature: SIGNATURE },
        { functionCall: { id: 'call-2', name: 'read_file', args: { path: 'a.ts' } } },
      ],
    },
    {
      role: 'user',
      parts: [
        { functionResponse: { name: 'run_shell_command', response: { output: 'a.ts\nb.ts\n' } } },
        { functionResponse: { id: 'call-2', name: 'read_file', response: { lines: 2, body: ['x', 'y'] } } },
        { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    },
    { role: 'model', parts: [{ text: 'Done.' }] },
  ],
  systemInstruction: { parts: [{ text: 'You are an interactive CLI agent.' }] },
  tools: [{ functionDeclarations: [{ name: 'run_shell_command', parametersJsonSchema: { type: 'object' } }, { name: 'read_file' }] }],
  generationConfig: { temperature: 0, thinkingConfig: { includeThoughts: true }, brandNew: [1, { y: 2 }] },
  unknownTopLevel: { keep: 'me' },
};
const raw = JSON.stringify(body, null, 1);

const rewrite = (messages: Message[], at: number, content: string): Message[] => messages.map((m, i) => (i === at ? { ...m, content } : m));

describe('decoding a Gemini body', () => {
  const view = decodeRequest('gemini', raw);

  it('reads model turns with their calls, each function response as a tool message, other parts as a user message', () => {
    expect(view.messages.map((m) => [m.role, m.tool_calls?.map((c) => `${c.id}=${c.name}`) ?? m.tool_call_id ?? null])).toEqual([
      ['user', null],
      ['assistant', ['gemini:1:2=run_shell_command', 'call-2=read_file']],
      ['tool', 'gemini:1:2'],
      ['tool', 'call-2'],
      ['user', null],
      ['assistant', null],
    ]);
    expect(view.messages[2]?.content).toBe('a.ts\nb.ts\n');
    expect(view.messages[3]?.content).toBe('{"lines":2,"body":["x","y"]}');
    expect(view.systemHead).toBe('You are an interactive CLI agent.');
    expect(view.firstUserText).toBe('This is the Gemini CLI.fix the tests');
    expect(view.toolsDeclared).toBe(true);
    expect(view.toolChoiceAllowsInjection).toBe(true);
  });

  it('keeps thought parts and signed parts opaque, never text a component could rewrite', () => {
    const model = view.messages[1]?.content;
    expect(Array.isArray(model) && model.map((b) => b.type)).toEqual(['gemini_thought', 'gemini_text']);
  });

  it('names its session from the system instruction and the first user text when nothing else does', () => {
    const other = decodeRequest('gemini', JSON.stringify({ ...body, generationConfig: {} }));
    expect(resolveSessionKey(view, undefined, 't')).toBe(resolveSessionKey(other, undefined, 't'));
    expect(resolveSessionKey(view, 'my-session', 't')).toBe('t:my-session');
  });

  it('refuses a body without contents', () => {
    expect(() => decodeRequest('gemini', '{"model":"x"}')).toThrow('`contents` must be an array');
  });
});

describe('encoding a Gemini body', () => {
  const view = decodeRequest('gemini', raw);

  it('forwards the very bytes when nothing changed', () => {
    expect(encodeRequest(view, view.messages, { injectExpand: false }).raw).toBe(raw);
  });

  it('rewrites a string function response in place and nothing else', () => {
    const out = encodeRequest(view, rewrite(view.messages, 2, 'a.ts b.ts'), { injectExpand: false });
    expect(out.discarded).toEqual([]);
    expect(out.raw).toBe(raw.replace(JSON.stringify('a.ts\nb.ts\n'), JSON.stringify('a.ts b.ts')));
    expect(out.raw).toContain(JSON.stringify(SIGNATURE));
    expect(validateProviderShape('gemini', JSON.parse(out.raw))).toEqual([]);
  });

  it('rewrites a JSON-valued response as an object: compacted JSON as is, a marker text under output', () => {
    const compact = encodeRequest(view, rewrite(view.messages, 3, '{"lines":2}'), { injectExpand: false });
    expect((JSON.parse(compact.raw) as typeof body).contents[2]?.parts[1]).toEqual({
      functionResponse: { id: 'call-2', name: 'read_file', response: { lines: 2 } },
    });
    const marker = encodeRequest(view, rewrite(view.messages, 3, '<<cg:0123456789abcdef>>'), { injectExpand: false });
    expect((JSON.parse(marker.raw) as typeof body).contents[2]?.parts[1]).toEqual({
      functionResponse: { id: 'call-2', name: 'read_file', response: { output: '<<cg:0123456789abcdef>>' } },
    });
  });

  it('discards a change to a model turn or a user text: the content keeps its bytes', () => {
    const out = encodeRequest(view, rewrite(rewrite(view.messages, 5, 'changed'), 0, 'changed'), { injectExpand: false });
    expect(out.discarded).toEqual([0, 5]);
    expect(out.raw).toBe(raw);
  });
});

describe('the expand tool on a Gemini body', () => {
  const declaration = expandToolJson('gemini');

  it('is appended last to the last tool that declares functions', () => {
    const view = decodeRequest('gemini', raw);
    const out = encodeRequest(view, view.messages, { injectExpand: true });
    expect(out.injected).toBe(true);
    const tools = (JSON.parse(out.raw) as typeof body).tools;
    expect(tools[0]?.functionDeclarations.map((d) => d.name)).toEqual(['run_shell_command', 'read_file', 'context_guru_expand']);
    expect(out.raw.replace(`,${declaration}`, '')).toBe(raw);
    expect(validateProviderShape('gemini', JSON.parse(out.raw))).toEqual([]);
    expect(decodeRequest('gemini', out.raw).expandToolDeclared).toBe(true);
  });

  it('gets a tool of its own when the body has none, and none beside built-ins only', () => {
    const bare = decodeRequest('gemini', '{"contents":[{"parts":[{"text":"hi"}]}]}');
    expect(encodeRequest(bare, bare.messages, { injectExpand: true }).raw).toBe(
      `{"contents":[{"parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[${declaration}]}]}`,
    );
    const builtIn = decodeRequest('gemini', '{"contents":[{"parts":[{"text":"hi"}]}],"tools":[{"googleSearch":{}}]}');
    expect(encodeRequest(builtIn, builtIn.messages, { injectExpand: true }).injected).toBe(false);
  });

  it('is not offered when function calling is not automatic or the request names an explicit cache', () => {
    const any = decodeRequest('gemini', JSON.stringify({ ...body, toolConfig: { functionCallingConfig: { mode: 'ANY' } } }));
    expect(any.toolChoiceAllowsInjection).toBe(false);
    const auto = decodeRequest('gemini', JSON.stringify({ ...body, toolConfig: { functionCallingConfig: { mode: 'AUTO' } } }));
    expect(auto.toolChoiceAllowsInjection).toBe(true);
    const cached = decodeRequest('gemini', JSON.stringify({ contents: body.contents, cachedContent: 'cachedContents/abc' }));
    expect(cached.toolChoiceAllowsInjection).toBe(false);
  });
});

describe('the Gemini shape validator', () => {
  it('accepts the sample body', () => {
    expect(validateProviderShape('gemini', body)).toEqual([]);
  });

  it('refuses unanswered calls, misplaced calls and responses, two data fields, duplicate names, tools beside a cache', () => {
    const bad = {
      contents: [
        { role: 'user', parts: [{ text: 'a', inlineData: { mimeType: 'x', data: '' } }] },
        { role: 'model', parts: [{ functionCall: { name: 'f' } }, { functionCall: { name: 'g' } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }, { functionCall: { name: 'h' } }] },
        { role: 'system', parts: [{ text: 'x' }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'f' }, { name: 'f' }] }],
      cachedContent: 'cachedContents/abc',
    };
    expect(validateProviderShape('gemini', bad)).toEqual([
      'contents[0].parts[0]: one part carries text and inlineData (at most one data field)',
      'contents[2].parts[1]: functionCall outside a model content',
      'contents[1]: 2 function calls answered by 1 function responses in contents[2]',
      'contents[3]: invalid role "system"',
      'tools[0].functionDeclarations[1]: duplicate function name "f"',
      'tools: not allowed beside cachedContent (the cached content fixes it)',
    ]);
  });
});
