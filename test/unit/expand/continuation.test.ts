import { buildContinuation, resolveCalls, unavailableText } from '../../../libs/engine/src/expand/continuation';
import { expandIdOf, splitCalls } from '../../../libs/engine/src/expand/expand-calls';
import { appendToArray, locate } from '../../../libs/engine/src/expand/raw-json';
import type { ExpandHooks } from '../../../libs/engine/src/expand/expand.types';
import { anthropicMessage, anthropicRequestRaw, openAiCompletion, openAiRequestRaw } from '../../support/fake-upstream-json';
import { expandToolUse } from '../../support/fake-upstream-sse';

function hooks(stash: Record<string, string>, seen: string[] = []): ExpandHooks {
  return {
    resolve: async (id) => stash[id] ?? null,
    onResolved: (id) => void seen.push(id),
  };
}

describe('raw JSON splicing', () => {
  it('appends after the last element and keeps every other byte', () => {
    const raw = '{"messages" : [ {"role":"user","content":"a ]"} ]\n, "z": [1]}';
    const out = appendToArray(raw, ['messages'], ['{"role":"assistant","content":"b"}']);
    expect(out).toBe('{"messages" : [ {"role":"user","content":"a ]"},{"role":"assistant","content":"b"} ]\n, "z": [1]}');
    expect(JSON.parse(out!)).toEqual({
      messages: [
        { role: 'user', content: 'a ]' },
        { role: 'assistant', content: 'b' },
      ],
      z: [1],
    });
  });

  it('handles an empty array and refuses a missing or non-array member', () => {
    expect(appendToArray('{"messages":[ ]}', ['messages'], ['1', '2'])).toBe('{"messages":[1,2 ]}');
    expect(appendToArray('{"prompt":"x"}', ['messages'], ['1'])).toBeNull();
    expect(appendToArray('{"messages":"x"}', ['messages'], ['1'])).toBeNull();
  });

  it('only looks at the top-level member, and picks the last duplicate as JSON.parse does', () => {
    const raw = '{"system":{"messages":[]},"messages":[1],"messages":[2]}';
    expect(appendToArray(raw, ['messages'], ['3'])).toBe('{"system":{"messages":[]},"messages":[1],"messages":[2,3]}');
    expect(locate('{"a":[{"b":"x"}]}', ['a', 0, 'b'])).toEqual({ start: 11, end: 14 });
  });
});

describe('resolveCalls', () => {
  it('answers every call in call order, placeholders for misses, and reports only resolved ones', async () => {
    const seen: string[] = [];
    const failing: ExpandHooks = {
      resolve: async (id) => {
        if (id === 'boom') throw new Error('redis down');
        return id === 'aaaa' ? 'ORIGINAL A' : null;
      },
      onResolved: (id) => void seen.push(id),
    };
    const results = await resolveCalls(
      [
        { callId: 'c1', id: 'gone' },
        { callId: 'c2', id: 'aaaa' },
        { callId: 'c3', id: 'boom' },
        { callId: 'c4', id: 'bad id!' },
      ],
      failing,
    );
    expect(results.map((r) => [r.callId, r.text, r.resolved])).toEqual([
      ['c1', '[expand: original for id gone is no longer available]', false],
      ['c2', 'ORIGINAL A', true],
      ['c3', unavailableText('boom'), false],
      ['c4', unavailableText('bad id!'), false],
    ]);
    expect(seen).toEqual(['aaaa']);
  });
});

describe('buildContinuation', () => {
  it('Anthropic: appends the assistant turn verbatim, then one user message of tool_results in call order', async () => {
    const request = anthropicRequestRaw(false);
    const message = anthropicMessage([
      { type: 'text', text: 'Let me see the full log.' },
      expandToolUse('bbbb', 0),
      expandToolUse('aaaa', 1),
    ]);
    const responseRaw = JSON.stringify(message, null, 1);
    const results = await resolveCalls(splitCalls('anthropic', message).expand, hooks({ aaaa: 'full A', bbbb: 'full B' }));
    const next = buildContinuation('anthropic', request, { json: message, raw: responseRaw }, results)!;

    // The original request bytes are a strict prefix/suffix of the continuation.
    const cut = request.lastIndexOf('}]}') + 3;
    expect(next.startsWith(request.slice(0, cut))).toBe(true);
    expect(next.endsWith(request.slice(cut))).toBe(true);
    // The model's content array is carried byte for byte (its own whitespace included).
    expect(next).toContain(`{"role":"assistant","content":${JSON.stringify(message['content'], null, 1).replace(/\n/g, '\n ')}}`);

    const body = JSON.parse(next) as { messages: unknown[] };
    expect(body.messages).toHaveLength(5);
    expect(body.messages[3]).toEqual({ role: 'assistant', content: message['content'] });
    expect(body.messages[4]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01Expand0Q8ZbM3kHk9x', content: 'full B' },
        { type: 'tool_result', tool_use_id: 'toolu_01Expand1Q8ZbM3kHk9x', content: 'full A' },
      ],
    });
  });

  it('OpenAI: appends choices[0].message verbatim, then one tool message per call in call order', async () => {
    const request = openAiRequestRaw(true);
    const completion = openAiCompletion(null, [
      { id: 'call_b', name: 'context_guru_expand', args: { id: 'bbbb' } },
      { id: 'call_a', name: 'context_guru_expand', args: { id: 'aaaa' } },
    ]);
    const raw = JSON.stringify(completion);
    const results = await resolveCalls(splitCalls('openai', completion).expand, hooks({ aaaa: 'full A' }));
    const next = buildContinuation('openai', request, { json: completion, raw }, results)!;
    const body = JSON.parse(next) as { stream: boolean; messages: unknown[]; tools: unknown[] };
    expect(body.stream).toBe(true);
    expect(body.tools).toHaveLength(2);
    const choice = (completion['choices'] as Array<{ message: unknown }>)[0]!;
    expect(body.messages.slice(4)).toEqual([
      choice.message,
      { role: 'tool', tool_call_id: 'call_b', content: unavailableText('bbbb') },
      { role: 'tool', tool_call_id: 'call_a', content: 'full A' },
    ]);
    expect(next).toContain(JSON.stringify(choice.message));
  });

  it('re-serialises the parsed turn when there are no raw bytes (aggregated streams)', async () => {
    const message = anthropicMessage([expandToolUse('aaaa')]);
    const next = buildContinuation('anthropic', anthropicRequestRaw(true), { json: message }, [
      { callId: 'toolu_01Expand0Q8ZbM3kHk9x', id: 'aaaa', text: 'A', resolved: true },
    ]);
    expect((JSON.parse(next!) as { messages: unknown[] }).messages[3]).toEqual({ role: 'assistant', content: message['content'] });
  });
});

describe('splitCalls', () => {
  it('tells expand calls apart from the client tool calls beside them', () => {
    expect(splitCalls('anthropic', anthropicMessage([{ type: 'text', text: 'done' }]))).toEqual({ expand: [], client: 0, legacy: false });
    expect(splitCalls('anthropic', anthropicMessage([expandToolUse('a'), { type: 'tool_use', id: 't', name: 'bash', input: {} }]))).toEqual(
      {
        expand: [{ callId: 'toolu_01Expand0Q8ZbM3kHk9x', id: 'a' }],
        client: 1,
        legacy: false,
      },
    );
    expect(splitCalls('openai', openAiCompletion('hi'))).toEqual({ expand: [], client: 0, legacy: false });
    const both = splitCalls(
      'openai',
      openAiCompletion(null, [
        { name: 'context_guru_expand', args: { id: 'a' } },
        { name: 'bash', args: {} },
      ]),
    );
    expect(both).toEqual({ expand: [{ callId: 'call_0DhGwnZ2Kq7sL1xY4bT0pR', id: 'a' }], client: 1, legacy: false });
    const legacy = {
      choices: [{ message: { role: 'assistant', content: null, function_call: { name: 'context_guru_expand', arguments: '{}' } } }],
    };
    expect(splitCalls('openai', legacy)).toEqual({ expand: [], client: 0, legacy: true });
  });

  it('keeps a call whose arguments lack an id (it gets a placeholder)', () => {
    const c = openAiCompletion(null, [{ id: 'call_x', name: 'context_guru_expand', args: {} }]);
    expect(splitCalls('openai', c).expand).toEqual([{ callId: 'call_x', id: '' }]);
  });

  it('accepts the bare HASH or the whole marker, trimmed', () => {
    expect(expandIdOf('3f2a9c0d1e4b5a6c')).toBe('3f2a9c0d1e4b5a6c');
    expect(expandIdOf('  <<cg:3f2a9c0d1e4b5a6c>>\n')).toBe('3f2a9c0d1e4b5a6c');
    expect(expandIdOf('<<cg: 3f2a9c0d1e4b5a6c >>')).toBe('3f2a9c0d1e4b5a6c');
    expect(expandIdOf('<<cg:3f2a>> and more')).toBe('<<cg:3f2a>> and more');
    const m = anthropicMessage([
      { type: 'tool_use', id: 'toolu_m', name: 'context_guru_expand', input: { id: ' <<cg:3f2a9c0d1e4b5a6c>> ' } },
    ]);
    expect(splitCalls('anthropic', m).expand).toEqual([{ callId: 'toolu_m', id: '3f2a9c0d1e4b5a6c' }]);
  });
});
