import { Readable } from 'node:stream';
import { runExpandLoop } from '../../../apps/gateway/src/expand/expand-loop';
import type { ClientReply, Dialect, UpstreamReply } from '../../../apps/gateway/src/expand/expand.types';
import { anthropicMessage, anthropicRequestRaw, openAiCompletion, openAiRequestRaw, scriptedUpstream, stashHooks } from '../../support/fake-upstream-json';
import { expandToolUse, jsonReply, readBody } from '../../support/fake-upstream-sse';

const ORIGINAL = '> app@1.0.0 build\n> tsc -p .\n\nsrc/index.ts(3,7): error TS2322: Type \'string\' is not assignable to type \'number\'.\n';

const anthropicExpand = (...ids: string[]): string => JSON.stringify(anthropicMessage(ids.map((id, n) => expandToolUse(id, n))));
const anthropicAnswer = JSON.stringify(anthropicMessage([{ type: 'text', text: 'The build fails on a type error in src/index.ts line 3.' }], { input_tokens: 40, cache_read_input_tokens: 2100, output_tokens: 31 }));
const openAiExpand = (...ids: string[]): string =>
  JSON.stringify(openAiCompletion(null, ids.map((id, n) => ({ id: `call_x${n}`, name: 'context_guru_expand', args: { id } }))));
const openAiAnswer = JSON.stringify(openAiCompletion('A type error in src/index.ts.', [], { prompt_tokens: 3000, completion_tokens: 12, cached_tokens: 2048 }));

function run(dialect: Dialect, first: string, next: string[], stash: Record<string, string>, extra: { advertised?: boolean; firstReply?: UpstreamReply } = {}) {
  const upstream = scriptedUpstream(next.map((body) => () => jsonReply(body)));
  const hooks = stashHooks(stash);
  const requestRaw = dialect === 'anthropic' ? anthropicRequestRaw(false) : openAiRequestRaw(false);
  const reply = runExpandLoop({ dialect, requestRaw, advertised: extra.advertised ?? true, first: extra.firstReply ?? jsonReply(first), call: upstream.call, hooks });
  return { reply, upstream, hooks, requestRaw };
}

async function text(r: ClientReply): Promise<string> {
  return (await readBody(r.body)).toString('utf8');
}

describe('non-streaming expand loop', () => {
  it('Anthropic: resolves one expand call, continues once, and returns the final answer byte for byte', async () => {
    const { reply, upstream, hooks, requestRaw } = run('anthropic', anthropicExpand('3f2a9c0d1e4b5a6c'), [anthropicAnswer], { '3f2a9c0d1e4b5a6c': ORIGINAL });
    const r = await reply;
    expect(await text(r)).toBe(anthropicAnswer);
    expect(r).toMatchObject({ status: 200, mode: 'json', rounds: 1, usage: { fresh: 40, cacheRead: 2100, cacheWrite: 0, output: 31 } });
    await expect(r.usageDone).resolves.toEqual(r.usage);
    expect(hooks.resolved).toEqual(['3f2a9c0d1e4b5a6c']);
    expect(upstream.sent).toHaveLength(1);
    const sent = JSON.parse(upstream.sent[0]!) as { messages: Array<{ role: string; content: unknown }> };
    expect(sent.messages.slice(-1)[0]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Expand0Q8ZbM3kHk9x', content: ORIGINAL }] });
    // The client's own request bytes reach the provider unchanged up to the appended turns.
    expect(upstream.sent[0]!.startsWith(requestRaw.slice(0, requestRaw.lastIndexOf('}]}') + 3))).toBe(true);
  });

  it('OpenAI: one tool message per call, in call order, then the final answer verbatim', async () => {
    const { reply, upstream, hooks } = run('openai', openAiExpand('bbbb', 'aaaa'), [openAiAnswer], { aaaa: 'A-original', bbbb: 'B-original' });
    const r = await reply;
    expect(await text(r)).toBe(openAiAnswer);
    expect(r).toMatchObject({ mode: 'json', rounds: 1, usage: { fresh: 952, cacheRead: 2048, cacheWrite: 0, output: 12 } });
    expect(hooks.resolved).toEqual(['bbbb', 'aaaa']);
    const sent = JSON.parse(upstream.sent[0]!) as { messages: Array<Record<string, unknown>> };
    expect(sent.messages.slice(-3).map((m) => [m['role'], m['tool_call_id'] ?? null, m['content']])).toEqual([
      ['assistant', null, null],
      ['tool', 'call_x0', 'B-original'],
      ['tool', 'call_x1', 'A-original'],
    ]);
  });

  it('stops after three continuations and hands the fourth response to the client untouched', async () => {
    const again = [anthropicExpand('aaaa'), anthropicExpand('aaaa'), anthropicExpand('aaaa')];
    const { reply, upstream } = run('anthropic', anthropicExpand('aaaa'), again, { aaaa: 'A' });
    const r = await reply;
    expect(upstream.sent).toHaveLength(3);
    expect(r.rounds).toBe(3);
    expect(r.body).toBeInstanceOf(Readable);
    expect(await text(r)).toBe(again[2]);
    // Each continuation carries every earlier exchange: 3 original messages + 2 per round.
    expect(upstream.sent.map((s) => (JSON.parse(s) as { messages: unknown[] }).messages.length)).toEqual([5, 7, 9]);
  });

  it('honours a smaller maxRounds', async () => {
    const upstream = scriptedUpstream([() => jsonReply(anthropicExpand('aaaa'))]);
    const r = await runExpandLoop({ dialect: 'anthropic', requestRaw: anthropicRequestRaw(false), advertised: true, first: jsonReply(anthropicExpand('aaaa')), call: upstream.call, hooks: stashHooks({ aaaa: 'A' }), maxRounds: 1 });
    expect(r.rounds).toBe(1);
    expect(await text(r)).toBe(anthropicExpand('aaaa'));
  });

  it('answers an unavailable id with the placeholder when another id resolved', async () => {
    const { reply, upstream, hooks } = run('anthropic', anthropicExpand('gone0000', 'aaaa'), [anthropicAnswer], { aaaa: 'A' });
    await reply;
    expect(hooks.lookups).toEqual(['gone0000', 'aaaa']);
    expect(hooks.resolved).toEqual(['aaaa']);
    const sent = JSON.parse(upstream.sent[0]!) as { messages: Array<{ content: Array<{ content: string }> }> };
    expect(sent.messages.slice(-1)[0]!.content.map((b) => b.content)).toEqual(['[expand: original for id gone0000 is no longer available]', 'A']);
  });

  it('replays the model turn verbatim when nothing resolved, without calling upstream again', async () => {
    const first = anthropicExpand('gone0000');
    const { reply, upstream } = run('anthropic', first, [], {});
    const r = await reply;
    expect(await text(r)).toBe(first);
    expect(r).toMatchObject({ rounds: 0, mode: 'json' });
    expect(upstream.sent).toHaveLength(0);
  });

  it('returns the response verbatim when any other tool is called alongside', async () => {
    const mixed = JSON.stringify(openAiCompletion(null, [{ name: 'context_guru_expand', args: { id: 'aaaa' } }, { name: 'bash', args: { command: 'make' } }]));
    const { reply, upstream, hooks } = run('openai', mixed, [], { aaaa: 'A' });
    expect(await text(await reply)).toBe(mixed);
    expect(upstream.sent).toHaveLength(0);
    expect(hooks.lookups).toEqual([]);
  });

  it('returns a plain answer verbatim (including odd formatting)', async () => {
    const pretty = JSON.stringify(JSON.parse(anthropicAnswer), null, 2);
    const { reply, upstream } = run('anthropic', pretty, [], {});
    const r = await reply;
    expect(await text(r)).toBe(pretty);
    expect(upstream.sent).toHaveLength(0);
  });

  it('does not intercept when the tool was not advertised, nor on an error status', async () => {
    const a = run('anthropic', anthropicExpand('aaaa'), [], { aaaa: 'A' }, { advertised: false });
    const ra = await a.reply;
    expect(ra.body).toBeInstanceOf(Readable);
    expect(await text(ra)).toBe(anthropicExpand('aaaa'));
    expect(a.upstream.sent).toHaveLength(0);
    await expect(ra.usageDone).resolves.toEqual({ fresh: 2095, cacheRead: 0, cacheWrite: 0, output: 503 });

    const err = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}';
    const b = run('anthropic', '', [], {}, { firstReply: jsonReply(err, { status: 529 }) });
    const rb = await b.reply;
    expect(rb.status).toBe(529);
    expect(await text(rb)).toBe(err);
  });

  it('relays an upstream error on a continuation round as it came', async () => {
    const err = '{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","code":"rate_limit_exceeded"}}';
    const upstream = scriptedUpstream([() => jsonReply(err, { status: 429 })]);
    const r = await runExpandLoop({ dialect: 'openai', requestRaw: openAiRequestRaw(false), advertised: true, first: jsonReply(openAiExpand('aaaa')), call: upstream.call, hooks: stashHooks({ aaaa: 'A' }) });
    expect(r).toMatchObject({ status: 429, rounds: 1 });
    expect(await text(r)).toBe(err);
  });

  it('replays a body that is not JSON', async () => {
    const { reply } = run('openai', 'upstream said <html>', [], {});
    expect(await text(await reply)).toBe('upstream said <html>');
  });
});
