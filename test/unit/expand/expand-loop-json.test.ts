import { Readable } from 'node:stream';
import { runExpandLoop } from '../../../apps/gateway/src/expand/expand-loop';
import type { ClientReply, Dialect, UpstreamReply } from '../../../libs/engine/src/expand/expand.types';
import {
  anthropicMessage,
  anthropicRequestRaw,
  openAiCompletion,
  openAiRequestRaw,
  scriptedUpstream,
  stashHooks,
} from '../../support/fake-upstream-json';
import { expandToolUse, jsonReply, readBody } from '../../support/fake-upstream-sse';

const ORIGINAL = "> app@1.0.0 build\n> tsc -p .\n\nsrc/index.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n";

const anthropicExpand = (...ids: string[]): string => JSON.stringify(anthropicMessage(ids.map((id, n) => expandToolUse(id, n))));
const anthropicAnswer = JSON.stringify(
  anthropicMessage([{ type: 'text', text: 'The build fails on a type error in src/index.ts line 3.' }], {
    input_tokens: 40,
    cache_read_input_tokens: 2100,
    output_tokens: 31,
  }),
);
const openAiExpand = (...ids: string[]): string =>
  JSON.stringify(
    openAiCompletion(
      null,
      ids.map((id, n) => ({ id: `call_x${n}`, name: 'context_guru_expand', args: { id } })),
    ),
  );
const openAiAnswer = JSON.stringify(
  openAiCompletion('A type error in src/index.ts.', [], { prompt_tokens: 3000, completion_tokens: 12, cached_tokens: 2048 }),
);

function run(
  dialect: Dialect,
  first: string,
  next: string[],
  stash: Record<string, string>,
  extra: { advertised?: boolean; firstReply?: UpstreamReply } = {},
) {
  const upstream = scriptedUpstream(next.map((body) => () => jsonReply(body)));
  const hooks = stashHooks(stash);
  const requestRaw = dialect === 'anthropic' ? anthropicRequestRaw(false) : openAiRequestRaw(false);
  const reply = runExpandLoop({
    dialect,
    requestRaw,
    advertised: extra.advertised ?? true,
    first: extra.firstReply ?? jsonReply(first),
    call: upstream.call,
    hooks,
  });
  return { reply, upstream, hooks, requestRaw };
}

async function text(r: ClientReply): Promise<string> {
  return (await readBody(r.body)).toString('utf8');
}

/** The final answer with `usage` counters raised by the earlier rounds' (what the client is billed). */
function withUsage(answer: string, add: Record<string, number>): string {
  const json = JSON.parse(answer) as { usage: Record<string, unknown> };
  for (const [k, v] of Object.entries(add)) json.usage[k] = (json.usage[k] as number) + v;
  return JSON.stringify(json);
}

describe('non-streaming expand loop', () => {
  it('Anthropic: resolves one expand call, continues once, and returns the answer with both rounds billed', async () => {
    const { reply, upstream, hooks, requestRaw } = run('anthropic', anthropicExpand('3f2a9c0d1e4b5a6c'), [anthropicAnswer], {
      '3f2a9c0d1e4b5a6c': ORIGINAL,
    });
    const r = await reply;
    expect(await text(r)).toBe(withUsage(anthropicAnswer, { input_tokens: 2095, output_tokens: 503 }));
    expect(r).toMatchObject({ status: 200, mode: 'json', rounds: 1, usage: { fresh: 2135, cacheRead: 2100, cacheWrite: 0, output: 534 } });
    await expect(r.usageDone).resolves.toEqual(r.usage);
    expect(hooks.resolved).toEqual(['3f2a9c0d1e4b5a6c']);
    expect(upstream.sent).toHaveLength(1);
    const sent = JSON.parse(upstream.sent[0]!) as { messages: Array<{ role: string; content: unknown }> };
    expect(sent.messages.slice(-1)[0]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_01Expand0Q8ZbM3kHk9x', content: ORIGINAL }],
    });
    // The client's own request bytes reach the provider unchanged up to the appended turns.
    expect(upstream.sent[0]!.startsWith(requestRaw.slice(0, requestRaw.lastIndexOf('}]}') + 3))).toBe(true);
  });

  it('OpenAI: one tool message per call, in call order, then the final answer', async () => {
    const { reply, upstream, hooks } = run('openai', openAiExpand('bbbb', 'aaaa'), [openAiAnswer], {
      aaaa: 'A-original',
      bbbb: 'B-original',
    });
    const r = await reply;
    const answer = JSON.parse(await text(r)) as { choices: unknown[]; usage: Record<string, unknown> };
    expect(answer.choices).toEqual((JSON.parse(openAiAnswer) as { choices: unknown[] }).choices);
    expect(answer.usage).toMatchObject({
      prompt_tokens: 4843,
      completion_tokens: 76,
      total_tokens: 4919,
      prompt_tokens_details: { cached_tokens: 3072 },
    });
    expect(r).toMatchObject({ mode: 'json', rounds: 1, usage: { fresh: 1771, cacheRead: 3072, cacheWrite: 0, output: 76 } });
    expect(hooks.resolved).toEqual(['bbbb', 'aaaa']);
    const sent = JSON.parse(upstream.sent[0]!) as { messages: Array<Record<string, unknown>> };
    expect(sent.messages.slice(-3).map((m) => [m['role'], m['tool_call_id'] ?? null, m['content']])).toEqual([
      ['assistant', null, null],
      ['tool', 'call_x0', 'B-original'],
      ['tool', 'call_x1', 'A-original'],
    ]);
  });

  it('stops after three continuations and never hands the client the last expand call', async () => {
    const again = [anthropicExpand('aaaa'), anthropicExpand('aaaa'), anthropicExpand('aaaa')];
    const { reply, upstream } = run('anthropic', anthropicExpand('aaaa'), again, { aaaa: 'A' });
    const r = await reply;
    expect(upstream.sent).toHaveLength(3);
    expect(r.rounds).toBe(3);
    const out = JSON.parse(await text(r)) as { content: unknown[]; stop_reason: string };
    expect(out).toMatchObject({ content: [], stop_reason: 'end_turn' });
    // Each continuation carries every earlier exchange: 3 original messages + 2 per round.
    expect(upstream.sent.map((s) => (JSON.parse(s) as { messages: unknown[] }).messages.length)).toEqual([5, 7, 9]);
  });

  it('honours a smaller maxRounds', async () => {
    const upstream = scriptedUpstream([() => jsonReply(anthropicExpand('aaaa'))]);
    const r = await runExpandLoop({
      dialect: 'anthropic',
      requestRaw: anthropicRequestRaw(false),
      advertised: true,
      first: jsonReply(anthropicExpand('aaaa')),
      call: upstream.call,
      hooks: stashHooks({ aaaa: 'A' }),
      maxRounds: 1,
    });
    expect(r.rounds).toBe(1);
    expect(await text(r)).not.toContain('context_guru_expand');
  });

  it('merges the text the model wrote before its expand call into the answer', async () => {
    const first = JSON.stringify(anthropicMessage([{ type: 'text', text: 'Let me look at the full output.' }, expandToolUse('aaaa')]));
    const { reply } = run('anthropic', first, [anthropicAnswer], { aaaa: 'A' });
    const out = JSON.parse(await text(await reply)) as { content: unknown[]; stop_reason: string };
    expect(out.content).toEqual([
      { type: 'text', text: 'Let me look at the full output.' },
      { type: 'text', text: 'The build fails on a type error in src/index.ts line 3.' },
    ]);
    expect(out.stop_reason).toBe('end_turn');

    const oFirst = JSON.stringify(openAiCompletion('Checking. ', [{ name: 'context_guru_expand', args: { id: '<<cg:aaaa>>' } }]));
    const o = run('openai', oFirst, [openAiAnswer], { aaaa: 'A' });
    const oOut = JSON.parse(await text(await o.reply)) as { choices: Array<{ message: Record<string, unknown>; finish_reason: string }> };
    expect(oOut.choices[0]!.message['content']).toBe('Checking. A type error in src/index.ts.');
    expect(oOut.choices[0]!.message['tool_calls']).toBeUndefined();
    expect(o.hooks.resolved).toEqual(['aaaa']);
  });

  it('answers an unavailable id with the placeholder when another id resolved', async () => {
    const { reply, upstream, hooks } = run('anthropic', anthropicExpand('gone0000', 'aaaa'), [anthropicAnswer], { aaaa: 'A' });
    await reply;
    expect(hooks.lookups).toEqual(['gone0000', 'aaaa']);
    expect(hooks.resolved).toEqual(['aaaa']);
    const sent = JSON.parse(upstream.sent[0]!) as { messages: Array<{ content: Array<{ content: string }> }> };
    expect(sent.messages.slice(-1)[0]!.content.map((b) => b.content)).toEqual([
      '[expand: original for id gone0000 is no longer available]',
      'A',
    ]);
  });

  it('answers a call whose original is gone with the placeholder, so the model moves on', async () => {
    const { reply, upstream } = run('anthropic', anthropicExpand('gone0000'), [anthropicAnswer], {});
    const r = await reply;
    expect(await text(r)).not.toContain('context_guru_expand');
    expect(r).toMatchObject({ rounds: 1, mode: 'json' });
    expect(upstream.sent[0]).toContain('is no longer available');
  });

  it('strips an expand call beside another tool call and leaves the rest to the client', async () => {
    const mixed = openAiCompletion(null, [
      { name: 'context_guru_expand', args: { id: 'aaaa' } },
      { name: 'bash', args: { command: 'make' } },
    ]);
    const { reply, upstream } = run('openai', JSON.stringify(mixed), [], { aaaa: 'A' });
    const out = JSON.parse(await text(await reply)) as { choices: Array<{ message: { tool_calls: unknown[] }; finish_reason: string }> };
    const calls = (mixed['choices'] as Array<{ message: { tool_calls: unknown[] } }>)[0]!.message.tool_calls;
    expect(out.choices[0]!.message.tool_calls).toEqual([calls[1]]);
    expect(out.choices[0]!.finish_reason).toBe('tool_calls');
    expect(upstream.sent).toHaveLength(0);
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
    const r = await runExpandLoop({
      dialect: 'openai',
      requestRaw: openAiRequestRaw(false),
      advertised: true,
      first: jsonReply(openAiExpand('aaaa')),
      call: upstream.call,
      hooks: stashHooks({ aaaa: 'A' }),
    });
    expect(r).toMatchObject({ status: 429, rounds: 1 });
    expect(await text(r)).toBe(err);
  });

  it('replays a body that is not JSON', async () => {
    const { reply } = run('openai', 'upstream said <html>', [], {});
    expect(await text(await reply)).toBe('upstream said <html>');
  });
});
