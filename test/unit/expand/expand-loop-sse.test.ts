import { Readable } from 'node:stream';
import { runExpandLoop } from '../../../apps/gateway/src/expand/expand-loop';
import { parseSseEvents } from '../../../apps/gateway/src/expand/sse-lines';
import type { ClientReply, Dialect } from '../../../apps/gateway/src/expand/expand.types';
import { anthropicMessage, anthropicRequestRaw, openAiCompletion, openAiRequestRaw, scriptedUpstream, stashHooks } from '../../support/fake-upstream-json';
import {
  SIGNATURE,
  anthropicExpandSse,
  anthropicSse,
  anthropicTextSse,
  anthropicThinkingTextSse,
  expandToolUse,
  jsonReply,
  openAiExpandSse,
  openAiSse,
  openAiTextSse,
  readBody,
  sseReply,
} from '../../support/fake-upstream-sse';

const ORIGINAL = 'FAIL src/app.test.ts\n  ● adds numbers › handles ünïcode ✓\n    expect(received).toBe(expected)\n';

function request(dialect: Dialect): string {
  return dialect === 'anthropic' ? anthropicRequestRaw(true) : openAiRequestRaw(true);
}

async function loop(dialect: Dialect, first: string, next: string[], opts: { advertised?: boolean; chunk?: number; stash?: Record<string, string> } = {}) {
  const upstream = scriptedUpstream(next.map((body) => () => sseReply(body, { chunk: opts.chunk ?? 5 })));
  const hooks = stashHooks(opts.stash ?? { '3f2a9c0d1e4b5a6c': ORIGINAL });
  const reply = await runExpandLoop({ dialect, requestRaw: request(dialect), advertised: opts.advertised ?? true, first: sseReply(first, { chunk: opts.chunk ?? 5 }), call: upstream.call, hooks });
  return { reply, upstream, hooks };
}

async function text(r: ClientReply): Promise<string> {
  return (await readBody(r.body)).toString('utf8');
}

describe('streamable responses reach the client byte-identical', () => {
  const cases: Array<[Dialect, string, string]> = [
    ['anthropic', 'text', anthropicTextSse('Die Ursache: ein Tippfehler in ümlaut.ts — fixed ✓ 🚀')],
    ['anthropic', 'thinking+text', anthropicThinkingTextSse('Look at the stack trace first.', 'The test expects 3 but gets "3".')],
    ['openai', 'text', openAiTextSse('The test expects 3 but gets "3" — 日本語.')],
  ];
  for (const [dialect, name, sse] of cases) {
    it(`${dialect} ${name}, at 1-, 3- and 5-byte chunks`, async () => {
      for (const chunk of [1, 3, 5]) {
        const { reply, upstream } = await loop(dialect, sse, [], { chunk });
        expect(reply.body).toBeInstanceOf(Readable);
        expect(reply).toMatchObject({ status: 200, mode: 'streamed', rounds: 0, usage: null });
        expect(await text(reply)).toBe(sse);
        expect(upstream.sent).toHaveLength(0);
        const outcome = await reply.streamDone;
        expect(outcome).toMatchObject({ expandAfterStream: false, bytes: Buffer.byteLength(sse) });
        expect(reply.usage).toEqual(outcome.usage);
        expect(reply.usage).not.toBeNull();
      }
    });
  }

  it('flags a streamed answer that calls expand after speaking first', async () => {
    const sse = anthropicExpandSse(['3f2a9c0d1e4b5a6c'], { lead: 'Let me pull the full log.' });
    const { reply } = await loop('anthropic', sse, []);
    expect(await text(reply)).toBe(sse);
    expect(await reply.usageDone).toEqual({ fresh: 2095, cacheRead: 0, cacheWrite: 0, output: 87 });
    expect(reply.expandAfterStream).toBe(true);
  });

  it('passes an unadvertised stream straight through, even one that names the tool', async () => {
    const sse = anthropicExpandSse(['3f2a9c0d1e4b5a6c']);
    const { reply, upstream } = await loop('anthropic', sse, [], { advertised: false });
    expect(await text(reply)).toBe(sse);
    expect(reply.mode).toBe('streamed');
    expect(upstream.sent).toHaveLength(0);
    expect((await reply.streamDone).expandAfterStream).toBe(false);
  });
});

describe('an intercepted stream', () => {
  it('Anthropic: buffers the expand round, continues with stream:true and streams only the final answer', async () => {
    const final = anthropicTextSse('The assertion compares a number to a string.', { usage: { input_tokens: 61, cache_read_input_tokens: 2400, output_tokens: 19 } });
    const { reply, upstream, hooks } = await loop('anthropic', anthropicExpandSse(['3f2a9c0d1e4b5a6c']), [final]);
    expect(reply).toMatchObject({ mode: 'buffered', rounds: 1 });
    const out = await text(reply);
    expect(out).toBe(final);
    expect(out).not.toContain('context_guru_expand');
    // One well-formed stream: a single message_start … message_stop.
    const types = parseSseEvents(out).map((e) => e.event);
    expect(types[0]).toBe('message_start');
    expect(types.filter((t) => t === 'message_start')).toHaveLength(1);
    expect(types[types.length - 1]).toBe('message_stop');
    expect(await reply.usageDone).toEqual({ fresh: 61, cacheRead: 2400, cacheWrite: 0, output: 19 });
    expect(hooks.resolved).toEqual(['3f2a9c0d1e4b5a6c']);
    const sent = JSON.parse(upstream.sent[0]!) as { stream: boolean; messages: Array<{ role: string; content: unknown }> };
    expect(sent.stream).toBe(true);
    expect(sent.messages.slice(-2)).toEqual([
      { role: 'assistant', content: [expandToolUse('3f2a9c0d1e4b5a6c')] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Expand0Q8ZbM3kHk9x', content: ORIGINAL }] },
    ]);
  });

  it('Anthropic: carries thinking with its signature into the continuation', async () => {
    const first = anthropicSse([{ type: 'thinking', thinking: 'The log was masked; fetch it.', signature: SIGNATURE }, expandToolUse('3f2a9c0d1e4b5a6c')]);
    const { reply, upstream } = await loop('anthropic', first, [anthropicTextSse('Found it.')]);
    expect(await text(reply)).toBe(anthropicTextSse('Found it.'));
    const sent = JSON.parse(upstream.sent[0]!) as { messages: Array<{ role: string; content: unknown }> };
    expect(sent.messages[3]).toEqual({
      role: 'assistant',
      content: [{ type: 'thinking', thinking: 'The log was masked; fetch it.', signature: SIGNATURE }, expandToolUse('3f2a9c0d1e4b5a6c')],
    });
  });

  it('OpenAI: buffers a leading expand call and streams the final answer', async () => {
    const final = openAiTextSse('A string was compared to a number.');
    const { reply, upstream } = await loop('openai', openAiExpandSse(['3f2a9c0d1e4b5a6c']), [final]);
    expect(reply).toMatchObject({ mode: 'buffered', rounds: 1 });
    expect(await text(reply)).toBe(final);
    const sent = JSON.parse(upstream.sent[0]!) as { stream: boolean; messages: Array<Record<string, unknown>> };
    expect(sent.stream).toBe(true);
    expect(sent.messages.slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_Expand0Zq4WmT8', type: 'function', function: { name: 'context_guru_expand', arguments: '{"id":"3f2a9c0d1e4b5a6c"}' } }] },
      { role: 'tool', tool_call_id: 'call_Expand0Zq4WmT8', content: ORIGINAL },
    ]);
  });

  it('runs several rounds and stops at three, the last stream passing through', async () => {
    const again = anthropicExpandSse(['3f2a9c0d1e4b5a6c']);
    const { reply, upstream } = await loop('anthropic', again, [again, again, again]);
    expect(upstream.sent).toHaveLength(3);
    expect(reply).toMatchObject({ rounds: 3, mode: 'buffered' });
    expect(await text(reply)).toBe(again);
    expect(reply.expandAfterStream).toBe(true);
  });

  it('replays the buffered stream byte for byte when another tool is called alongside', async () => {
    const mixed = anthropicSse([expandToolUse('3f2a9c0d1e4b5a6c'), { type: 'tool_use', id: 'toolu_bash', name: 'bash', input: { command: 'npm test' } }]);
    const { reply, upstream } = await loop('anthropic', mixed, []);
    expect(reply.body).toBeInstanceOf(Buffer);
    expect(await text(reply)).toBe(mixed);
    expect(reply).toMatchObject({ mode: 'buffered', rounds: 0, usage: { fresh: 2095, output: 87 } });
    expect(upstream.sent).toHaveLength(0);
  });

  it('replays the buffered stream when nothing resolved, or when it cannot be rebuilt', async () => {
    const first = openAiSse(null, [{ name: 'context_guru_expand', args: { id: 'gone0000' } }, { name: 'context_guru_expand', args: { id: 'gone0001' } }]);
    const a = await loop('openai', first, []);
    expect(await text(a.reply)).toBe(first);
    expect(a.upstream.sent).toHaveLength(0);

    const sse = anthropicExpandSse(['3f2a9c0d1e4b5a6c']);
    const truncated = sse.slice(0, sse.lastIndexOf('event: content_block_delta'));
    const b = await loop('anthropic', truncated, []);
    expect(await text(b.reply)).toBe(truncated);
    expect(b.upstream.sent).toHaveLength(0);
  });

  it('renders a final answer that came back whole as the stream the client asked for', async () => {
    const upstream = scriptedUpstream([() => jsonReply(anthropicMessage([{ type: 'text', text: 'Done — ✓' }], { output_tokens: 9 }))]);
    const reply = await runExpandLoop({ dialect: 'anthropic', requestRaw: anthropicRequestRaw(true), advertised: true, first: sseReply(anthropicExpandSse(['3f2a9c0d1e4b5a6c'])), call: upstream.call, hooks: stashHooks({ '3f2a9c0d1e4b5a6c': 'x' }) });
    expect(reply.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const events = parseSseEvents(await readBody(reply.body)).map((e) => JSON.parse(e.data) as { type: string; delta?: { text?: string } });
    expect(events.map((e) => e.type)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events[2]!.delta?.text).toBe('Done — ✓');

    const oai = scriptedUpstream([() => jsonReply(openAiCompletion('Done.'))]);
    const r2 = await runExpandLoop({ dialect: 'openai', requestRaw: openAiRequestRaw(true), advertised: true, first: sseReply(openAiExpandSse(['3f2a9c0d1e4b5a6c'])), call: oai.call, hooks: stashHooks({ '3f2a9c0d1e4b5a6c': 'x' }) });
    expect((await readBody(r2.body)).toString()).toMatch(/"content":"Done\."[\s\S]*data: \[DONE\]\n\n$/);
  });
});

describe('an oversize preamble', () => {
  it('is streamed once the peek budget is spent, without reading the endless rest', async () => {
    let pulled = 0;
    const head = Buffer.from(anthropicTextSse('x').split('event: content_block_start')[0]!);
    const ping = Buffer.from('event: ping\ndata: {"type": "ping"}\n\n');
    async function* endless(): AsyncGenerator<Buffer> {
      pulled += head.length;
      yield head;
      for (;;) {
        pulled += ping.length;
        yield ping;
      }
    }
    const source = Readable.from(endless());
    const reply = await runExpandLoop({ dialect: 'anthropic', requestRaw: anthropicRequestRaw(true), advertised: true, first: { status: 200, headers: { 'content-type': 'text/event-stream' }, body: source }, call: scriptedUpstream([]).call, hooks: stashHooks({}), peekLimit: 4096 });
    expect(reply.mode).toBe('streamed');
    // Object-mode read-ahead is 16 chunks: the peek itself stopped at the budget.
    expect(pulled).toBeLessThan(4096 + 17 * ping.length + head.length);
    const body = reply.body as Readable;
    const first = (await body[Symbol.asyncIterator]().next()).value as Buffer;
    expect(first.subarray(0, head.length).equals(head)).toBe(true);
    body.destroy();
    const outcome = await reply.streamDone;
    expect(outcome.aborted).toBe(true);
    expect(source.destroyed).toBe(true);
  });
});
