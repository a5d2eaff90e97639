// The expand loop over streams: whatever comes before the expand call (nothing, thinking, text) is
// relayed as it arrives, the call is withheld, and the continuation is stitched into the same
// stream as more of one message — checked on the events and with the official SDK parsers.
import { PassThrough, Readable } from 'node:stream';
import { runExpandLoop } from '../../../apps/gateway/src/expand/expand-loop';
import { parseSseEvents } from '../../../libs/engine/src/expand/sse-lines';
import type { ClientReply, Dialect } from '../../../libs/engine/src/expand/expand.types';
import {
  anthropicMessage,
  anthropicRequestRaw,
  openAiCompletion,
  openAiRequestRaw,
  scriptedUpstream,
  stashHooks,
} from '../../support/fake-upstream-json';
import {
  SIGNATURE,
  anthropicSse,
  anthropicTextSse,
  anthropicThinkingTextSse,
  expandToolUse,
  jsonReply,
  openAiSse,
  openAiTextSse,
  readBody,
  sseReply,
  type AnthropicBlock,
  type OpenAiCall,
} from '../../support/fake-upstream-sse';
import { anthropicFinal, openAiFinal } from '../../support/sdk-parse';

const HASH = '3f2a9c0d1e4b5a6c';
const ORIGINAL = 'FAIL src/app.test.ts\n  ● adds numbers › handles ünïcode ✓\n    expect(received).toBe(expected)\n';
const THINKING: AnthropicBlock = { type: 'thinking', thinking: 'The log was masked; fetch it before answering.', signature: SIGNATURE };
const PREAMBLE = 'Let me look at the full output.';

function request(dialect: Dialect): string {
  return dialect === 'anthropic' ? anthropicRequestRaw(true) : openAiRequestRaw(true);
}

async function loop(
  dialect: Dialect,
  first: string,
  next: string[],
  opts: { advertised?: boolean; chunk?: number; stash?: Record<string, string>; maxRounds?: number } = {},
) {
  const upstream = scriptedUpstream(next.map((body) => () => sseReply(body, { chunk: opts.chunk ?? 5 })));
  const hooks = stashHooks(opts.stash ?? { [HASH]: ORIGINAL });
  const reply = await runExpandLoop({
    dialect,
    requestRaw: request(dialect),
    advertised: opts.advertised ?? true,
    first: sseReply(first, { chunk: opts.chunk ?? 5 }),
    call: upstream.call,
    hooks,
    maxRounds: opts.maxRounds,
  });
  return { reply, upstream, hooks };
}

async function text(r: ClientReply): Promise<string> {
  return (await readBody(r.body)).toString('utf8');
}

type AnthropicEvent = { type: string; index?: number; delta?: { stop_reason?: string }; usage?: Record<string, number> };
const events = (sse: string) => parseSseEvents(sse).map((e) => JSON.parse(e.data) as AnthropicEvent);

describe('streams without an expand call reach the client unchanged', () => {
  const cases: Array<[Dialect, string, string]> = [
    ['anthropic', 'text', anthropicTextSse('Die Ursache: ein Tippfehler in ümlaut.ts — fixed ✓ 🚀')],
    ['anthropic', 'thinking+text', anthropicThinkingTextSse('Look at the stack trace first.', 'The test expects 3 but gets "3".')],
    [
      'anthropic',
      'client tool',
      anthropicSse([
        { type: 'text', text: PREAMBLE },
        { type: 'tool_use', id: 'toolu_bash', name: 'bash', input: { command: 'npm test' } },
      ]),
    ],
    ['openai', 'text', openAiTextSse('The test expects 3 but gets "3" — 日本語.')],
    ['openai', 'text+client tool', openAiSse(PREAMBLE, [{ name: 'bash', args: { command: 'npm test' } }])],
  ];
  for (const [dialect, name, sse] of cases) {
    it(`${dialect} ${name}, at 1-, 3- and 5-byte chunks`, async () => {
      for (const chunk of [1, 3, 5]) {
        const { reply, upstream } = await loop(dialect, sse, [], { chunk });
        expect(reply.body).toBeInstanceOf(Readable);
        expect(reply).toMatchObject({ status: 200, mode: 'streamed', rounds: 0 });
        expect(await text(reply)).toBe(sse);
        expect(upstream.sent).toHaveLength(0);
        const outcome = await reply.streamDone;
        expect(outcome).toMatchObject({ expandAfterStream: false, bytes: Buffer.byteLength(sse), rounds: 0 });
        expect(reply.usage).toEqual(outcome.usage);
        expect(reply.usage).not.toBeNull();
      }
    });
  }

  it('passes an unadvertised stream straight through, even one that calls the tool', async () => {
    const sse = anthropicSse([expandToolUse(HASH)]);
    const { reply, upstream } = await loop('anthropic', sse, [], { advertised: false });
    expect(await text(reply)).toBe(sse);
    expect(upstream.sent).toHaveLength(0);
  });
});

describe('Anthropic: an expand call after any preamble is stitched into one message', () => {
  const final = anthropicTextSse('The assertion compares a number to a string.', {
    id: 'msg_cont',
    usage: { input_tokens: 61, cache_read_input_tokens: 2400, output_tokens: 19 },
  });
  const preambles: Array<[string, AnthropicBlock[]]> = [
    ['first', []],
    ['after thinking', [THINKING]],
    ['after text', [{ type: 'text', text: PREAMBLE }]],
    ['after thinking and text', [THINKING, { type: 'text', text: PREAMBLE }]],
  ];
  for (const [name, lead] of preambles) {
    it(`expand ${name}`, async () => {
      const first = anthropicSse([...lead, expandToolUse(HASH)], {
        usage: { input_tokens: 2095, cache_creation_input_tokens: 300, output_tokens: 40 },
      });
      const { reply, upstream, hooks } = await loop('anthropic', first, [final]);
      const out = await text(reply);
      expect(out).not.toContain('context_guru_expand');
      const evs = events(out);
      expect(evs.filter((e) => e.type === 'message_start')).toHaveLength(1);
      expect(evs.filter((e) => e.type === 'message_stop')).toHaveLength(1);
      expect(evs.filter((e) => e.type === 'message_delta')).toHaveLength(1);
      const starts = evs.filter((e) => e.type === 'content_block_start').map((e) => e.index);
      expect(starts).toEqual(lead.map((_, i) => i).concat([lead.length]));
      // The usage of both rounds, the stop reason of the last.
      const delta = evs.find((e) => e.type === 'message_delta')!;
      expect(delta.delta?.stop_reason).toBe('end_turn');
      expect(delta.usage).toMatchObject({
        input_tokens: 2095 + 61,
        cache_creation_input_tokens: 300,
        cache_read_input_tokens: 2400,
        output_tokens: 40 + 19,
      });
      expect((await reply.streamDone).rounds).toBe(1);
      expect(await reply.usageDone).toEqual({ fresh: 2156, cacheRead: 2400, cacheWrite: 300, output: 59 });
      expect(hooks.resolved).toEqual([HASH]);

      const sdk = await anthropicFinal(out);
      expect(sdk.content.map((b) => b.type)).toEqual([...lead.map((b) => b.type), 'text']);
      if (lead[0]?.type === 'thinking') expect(sdk.content[0]).toEqual(THINKING);
      expect(sdk.stop_reason).toBe('end_turn');
      expect(sdk.usage).toMatchObject({ input_tokens: 2156, output_tokens: 59 });

      // The continuation carries everything the model produced, signature included, then the original.
      const sent = JSON.parse(upstream.sent[0]!) as { stream: boolean; messages: Array<{ role: string; content: unknown }> };
      expect(sent.stream).toBe(true);
      expect(sent.messages.slice(-2)).toEqual([
        { role: 'assistant', content: [...lead, expandToolUse(HASH)] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Expand0Q8ZbM3kHk9x', content: ORIGINAL }] },
      ]);
    });
  }

  it('relays the preamble before the upstream stream has ended', async () => {
    const sse = anthropicSse([{ type: 'text', text: PREAMBLE }, expandToolUse(HASH)]);
    const cut = sse.indexOf('"name":"context_guru_expand"');
    const source = new PassThrough();
    source.write(sse.slice(0, cut));
    const upstream = scriptedUpstream([() => sseReply(final)]);
    const reply = await runExpandLoop({
      dialect: 'anthropic',
      requestRaw: request('anthropic'),
      advertised: true,
      first: { status: 200, headers: { 'content-type': 'text/event-stream' }, body: source },
      call: upstream.call,
      hooks: stashHooks({ [HASH]: ORIGINAL }),
    });
    const body = reply.body as Readable;
    let seen = '';
    for await (const c of body) {
      seen += (c as Buffer).toString();
      if (seen.includes(PREAMBLE.slice(-6))) break;
    }
    expect(source.writableEnded).toBe(false);
    expect(upstream.sent).toHaveLength(0);
    body.destroy();
  });

  it('keeps indices contiguous over several rounds and stops at maxRounds without showing the call', async () => {
    const again = anthropicSse([{ type: 'text', text: 'Once more.' }, expandToolUse(HASH)]);
    const { reply, upstream } = await loop('anthropic', again, [again, again], { maxRounds: 2 });
    const out = await text(reply);
    expect(upstream.sent).toHaveLength(2);
    expect(out).not.toContain('context_guru_expand');
    const evs = events(out);
    expect(evs.filter((e) => e.type === 'content_block_start').map((e) => e.index)).toEqual([0, 1, 2]);
    // Nothing will answer the last call, so the client is not told to run a tool.
    expect(evs.find((e) => e.type === 'message_delta')!.delta?.stop_reason).toBe('end_turn');
    expect((await anthropicFinal(out)).content.map((b) => b.type)).toEqual(['text', 'text', 'text']);
  });

  it('answers an id that is gone with the placeholder and continues', async () => {
    const { reply, upstream } = await loop('anthropic', anthropicSse([expandToolUse('gone0000')]), [final], { stash: {} });
    expect(await text(reply)).not.toContain('context_guru_expand');
    const sent = JSON.parse(upstream.sent[0]!) as { messages: Array<{ content: Array<{ content?: string }> }> };
    expect(sent.messages[sent.messages.length - 1]!.content[0]!.content).toBe('[expand: original for id gone0000 is no longer available]');
  });

  it('renders a continuation that came back whole as more of the stream', async () => {
    const upstream = scriptedUpstream([() => jsonReply(anthropicMessage([{ type: 'text', text: 'Done — ✓' }], { output_tokens: 9 }))]);
    const first = sseReply(anthropicSse([{ type: 'text', text: PREAMBLE }, expandToolUse(HASH)]));
    const reply = await runExpandLoop({
      dialect: 'anthropic',
      requestRaw: request('anthropic'),
      advertised: true,
      first,
      call: upstream.call,
      hooks: stashHooks({ [HASH]: 'x' }),
    });
    const sdk = await anthropicFinal(await readBody(reply.body));
    expect(sdk.content).toEqual([expect.objectContaining({ text: PREAMBLE }), expect.objectContaining({ text: 'Done — ✓' })]);
  });

  it('ends with the provider error event when the continuation fails', async () => {
    const upstream = scriptedUpstream([
      () => ({ ...jsonReply({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), status: 529 }),
    ]);
    const reply = await runExpandLoop({
      dialect: 'anthropic',
      requestRaw: request('anthropic'),
      advertised: true,
      first: sseReply(anthropicSse([expandToolUse(HASH)])),
      call: upstream.call,
      hooks: stashHooks({ [HASH]: 'x' }),
    });
    const out = await text(reply);
    expect(out).not.toContain('context_guru_expand');
    expect(events(out).slice(-1)[0]).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    await expect(anthropicFinal(out)).rejects.toThrow(/Overloaded/);
  });

  it('withholds an expand call beside a client tool call and relays the rest renumbered', async () => {
    const bash: AnthropicBlock = { type: 'tool_use', id: 'toolu_bash', name: 'bash', input: { command: 'npm test' } };
    const { reply, upstream } = await loop('anthropic', anthropicSse([{ type: 'text', text: PREAMBLE }, expandToolUse(HASH), bash]), []);
    const out = await text(reply);
    expect(upstream.sent).toHaveLength(0);
    expect(out).not.toContain('context_guru_expand');
    const sdk = await anthropicFinal(out);
    expect(sdk.content).toEqual([expect.objectContaining({ type: 'text', text: PREAMBLE }), expect.objectContaining(bash)]);
    expect(sdk.stop_reason).toBe('tool_use');
  });
});

describe('OpenAI: an expand call after content is stitched into one completion', () => {
  const final = openAiSse('A string was compared to a number.', [], {
    id: 'chatcmpl-cont',
    usage: { prompt_tokens: 3000, completion_tokens: 12, cached_tokens: 2048 },
  });
  const expandCall: OpenAiCall = { id: 'call_Expand0Zq4WmT8', name: 'context_guru_expand', args: { id: HASH } };
  for (const [name, lead] of [
    ['first', null],
    ['after content', PREAMBLE],
  ] as const) {
    it(`expand ${name}`, async () => {
      const first = openAiSse(lead, [expandCall], { usage: { prompt_tokens: 2900, completion_tokens: 20, cached_tokens: 1024 } });
      const { reply, upstream } = await loop('openai', first, [final]);
      const out = await text(reply);
      expect(out).not.toContain('context_guru_expand');
      const chunks = parseSseEvents(out)
        .filter((e) => e.data !== '[DONE]')
        .map(
          (e) =>
            JSON.parse(e.data) as {
              id: string;
              choices: Array<{ delta: { role?: string }; finish_reason: string | null }>;
              usage?: Record<string, unknown> | null;
            },
        );
      expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG']));
      expect(chunks.filter((c) => c.choices[0]?.delta.role !== undefined)).toHaveLength(1);
      expect(chunks.filter((c) => c.choices[0]?.finish_reason)).toHaveLength(1);
      expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(out.match(/\[DONE\]/g)).toHaveLength(1);
      expect(await reply.usageDone).toEqual({ fresh: 1876 + 952, cacheRead: 3072, cacheWrite: 0, output: 32 });

      const sdk = await openAiFinal(out);
      const message = sdk.choices[0]!.message;
      expect(message.content).toBe(`${lead ?? ''}A string was compared to a number.`);
      expect(message.tool_calls ?? []).toEqual([]);
      expect(sdk.choices[0]!.finish_reason).toBe('stop');
      expect(sdk.usage).toMatchObject({ prompt_tokens: 5900, completion_tokens: 32, prompt_tokens_details: { cached_tokens: 3072 } });

      const sent = JSON.parse(upstream.sent[0]!) as { stream: boolean; messages: Array<Record<string, unknown>> };
      expect(sent.messages.slice(-2)).toEqual([
        {
          role: 'assistant',
          content: lead,
          tool_calls: [
            {
              id: 'call_Expand0Zq4WmT8',
              type: 'function',
              function: { name: 'context_guru_expand', arguments: JSON.stringify({ id: HASH }) },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_Expand0Zq4WmT8', content: ORIGINAL },
      ]);
    });
  }

  it('withholds an expand call beside client calls and renumbers them', async () => {
    const first = openAiSse(PREAMBLE, [
      { id: 'call_read', name: 'read_file', args: { path: 'a.ts' } },
      expandCall,
      { id: 'call_bash', name: 'bash', args: { command: 'ls' } },
    ]);
    const { reply, upstream } = await loop('openai', first, []);
    const out = await text(reply);
    expect(upstream.sent).toHaveLength(0);
    expect(out).not.toContain('context_guru_expand');
    const sdk = await openAiFinal(out);
    expect(
      sdk.choices[0]!.message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : null)),
    ).toEqual([
      ['call_read', 'read_file', '{"path":"a.ts"}'],
      ['call_bash', 'bash', '{"command":"ls"}'],
    ]);
    expect(sdk.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('renders a whole JSON continuation as more of the stream', async () => {
    const upstream = scriptedUpstream([() => jsonReply(openAiCompletion('Done.'))]);
    const reply = await runExpandLoop({
      dialect: 'openai',
      requestRaw: request('openai'),
      advertised: true,
      first: sseReply(openAiSse(PREAMBLE, [expandCall])),
      call: upstream.call,
      hooks: stashHooks({ [HASH]: 'x' }),
    });
    const sdk = await openAiFinal(await readBody(reply.body));
    expect(sdk.choices[0]!.message.content).toBe(`${PREAMBLE}Done.`);
  });
});
