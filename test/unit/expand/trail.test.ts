// Expand trails: built from an answer's rounds, frozen, and re-inserted into the client's next
// requests as edits of its raw bytes — the withheld calls where they were, their results answering
// them, a stitched message split back into the provider turns it was. Every body re-inserted into
// passes the provider shape validator; a trail that does not fit exactly leaves the bytes alone.
import { emptySnapshot, frozenSlot, type SessionSnapshot } from '@context-guru/components';
import { buildTrail, messageAnchor, parseTrail, TRAIL_COMPONENT } from '../../../libs/engine/src/expand/trail';
import { trailEdits, trailKeys } from '../../../libs/engine/src/expand/trail-edits';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { TurnCache } from '../../../libs/engine/src/wire/turn-cache';
import { anthropicMessage, openAiCompletion } from '../../support/fake-upstream-json';
import type { AnthropicBlock } from '../../support/fake-upstream-sse';
import type { AnswerRound, Trail } from '../../../libs/engine/src/expand/expand.types';

type Json = Record<string, unknown>;
const EXPAND = 'context_guru_expand';
const expandUse = (id: string): AnthropicBlock => ({ type: 'tool_use', id, name: EXPAND, input: { id: 'abcdef0123456789' } });
const readUse: AnthropicBlock = { type: 'tool_use', id: 'toolu_read', name: 'read_file', input: { path: 'a.py' } };
const result = (callId: string, text = 'THE ORIGINAL') => ({ callId, id: 'abcdef0123456789', text, resolved: true });

function snapshotOf(...trails: Trail[]): SessionSnapshot {
  const s = emptySnapshot();
  for (const t of trails) s.frozen.set(frozenSlot(TRAIL_COMPONENT, t.anchor), JSON.stringify(t));
  return s;
}

function round(json: Json, results: AnswerRound['results'] = []): AnswerRound {
  return { turn: { json }, results };
}

function reinsert(dialect: 'anthropic' | 'openai', body: Json, ...trails: Trail[]): { raw: string; sent: Json } {
  const raw = JSON.stringify(body, null, 1);
  const view = decodeRequest(dialect, raw);
  const out = encodeRequest(view, view.messages, { injectExpand: false, trails: trailEdits(view, snapshotOf(...trails)) });
  const sent = JSON.parse(out.raw) as Json;
  // Only violations the client's own body had (a prefill's pending call) may remain.
  const own = new Set(validateProviderShape(dialect, body));
  expect(validateProviderShape(dialect, sent).filter((v) => !own.has(v))).toEqual([]);
  return { raw: out.raw, sent };
}

const anthropicBody = (messages: Json[]): Json => ({ model: 'claude-x', max_tokens: 100, messages });
const openAiBody = (messages: Json[]): Json => ({ model: 'gpt-x', messages: [{ role: 'system', content: 'sys' }, ...messages] });

describe('Anthropic trails', () => {
  it('beside a client call: the call goes back where it was and its result opens the next user message', () => {
    const answer = anthropicMessage([{ type: 'text', text: 'Looking.' }, readUse, expandUse('toolu_x')]);
    const trail = buildTrail('anthropic', [round(answer, [result('toolu_x')])])!;
    const client = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, readUse] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_read', content: 'def f(): ...', cache_control: { type: 'ephemeral' } }],
      },
    ];
    const { sent } = reinsert('anthropic', anthropicBody(client), trail);
    const messages = sent.messages as Json[];
    expect(messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, readUse, expandUse('toolu_x')] });
    expect(messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'THE ORIGINAL' }, client[2]!.content[0]],
    });
  });

  it('a stitched message (thinking, text, expand, then more text) becomes the provider turns again, the next string message kept', () => {
    const thinking: AnthropicBlock = { type: 'thinking', thinking: 'hm', signature: 'sig' };
    const r1 = anthropicMessage([thinking, { type: 'text', text: 'Let me look.' }, expandUse('toolu_x')]);
    const r2 = anthropicMessage([{ type: 'text', text: 'It fails on line 3.' }]);
    const trail = buildTrail('anthropic', [round(r1, [result('toolu_x')]), round(r2)])!;
    const client = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [thinking, { type: 'text', text: 'Let me look.' }, { type: 'text', text: 'It fails on line 3.' }] },
      { role: 'user', content: 'thanks' },
    ];
    const { sent } = reinsert('anthropic', anthropicBody(client), trail);
    expect(sent.messages).toEqual([
      client[0],
      { role: 'assistant', content: [thinking, { type: 'text', text: 'Let me look.' }, expandUse('toolu_x')] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'THE ORIGINAL' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'It fails on line 3.' }] },
      client[2],
    ]);
  });

  it('an answer that opened with the expand call, and a call left at the round limit answered in a string user message', () => {
    const r1 = anthropicMessage([expandUse('toolu_a')]);
    const r2 = anthropicMessage([{ type: 'text', text: 'Need one more.' }, expandUse('toolu_b')]);
    const trail = buildTrail('anthropic', [round(r1, [result('toolu_a', 'A')]), round(r2, [result('toolu_b', 'B')])])!;
    const client = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'text', text: 'Need one more.' }] },
      { role: 'user', content: 'and?' },
    ];
    const { sent } = reinsert('anthropic', anthropicBody(client), trail);
    expect(sent.messages).toEqual([
      client[0],
      { role: 'assistant', content: [expandUse('toolu_a')] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'A' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Need one more.' }, expandUse('toolu_b')] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'B' },
          { type: 'text', text: 'and?' },
        ],
      },
    ]);
  });

  it('leaves the bytes alone when the client changed the message, put role after content, or sent it last (prefill)', () => {
    const answer = anthropicMessage([{ type: 'text', text: 'Looking.' }, readUse, expandUse('toolu_x')]);
    const trail = buildTrail('anthropic', [round(answer, [result('toolu_x')])])!;
    const edited = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'text', text: 'Looking!' }, readUse] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_read', content: 'x' }] },
    ];
    const body = anthropicBody(edited);
    expect(reinsert('anthropic', body, trail).raw).toBe(JSON.stringify(body, null, 1));
    const last = anthropicBody([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, readUse] },
    ]);
    expect(reinsert('anthropic', last, trail).raw).toBe(JSON.stringify(last, null, 1));
    const r1 = anthropicMessage([{ type: 'text', text: 'a' }, expandUse('toolu_x')]);
    const split = buildTrail('anthropic', [round(r1, [result('toolu_x')]), round(anthropicMessage([{ type: 'text', text: 'b' }]))])!;
    const swapped = anthropicBody([
      { role: 'user', content: 'go' },
      {
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
        role: 'assistant',
      },
      { role: 'user', content: 'next' },
    ]);
    expect(reinsert('anthropic', swapped, split).raw).toBe(JSON.stringify(swapped, null, 1));
  });
});

describe('OpenAI trails', () => {
  const read = { id: 'call_read', name: 'read_file', args: { path: 'a.py' } };
  const expand = { id: 'call_x', name: EXPAND, args: { id: 'abcdef0123456789' } };

  it('beside a client call: the call back into tool_calls, its tool message right after the assistant message', () => {
    const answer = openAiCompletion('Looking.', [read, expand]);
    const trail = buildTrail('openai', [round(answer, [result('call_x')])])!;
    const message = (answer.choices as Json[])[0]!.message as Json;
    const calls = message.tool_calls as Json[];
    const client = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'Looking.', tool_calls: [calls[0]] },
      { role: 'tool', tool_call_id: 'call_read', content: 'def f(): ...' },
    ];
    const { sent } = reinsert('openai', openAiBody(client), trail);
    expect((sent.messages as Json[]).slice(1)).toEqual([
      client[0],
      { role: 'assistant', content: 'Looking.', tool_calls: calls },
      { role: 'tool', tool_call_id: 'call_x', content: 'THE ORIGINAL' },
      client[2],
    ]);
  });

  it('a stitched completion: the first round as the continuation sent it, the client message keeping the last round text', () => {
    const r1 = openAiCompletion('Let me look.', [expand]);
    const r2 = openAiCompletion('It fails on line 3.');
    const trail = buildTrail('openai', [round(r1, [result('call_x')]), round(r2)])!;
    const client = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'Let me look.It fails on line 3.' },
      { role: 'user', content: 'thanks' },
    ];
    const { sent } = reinsert('openai', openAiBody(client), trail);
    expect((sent.messages as Json[]).slice(1)).toEqual([
      client[0],
      (r1.choices as Json[])[0]!.message,
      { role: 'tool', tool_call_id: 'call_x', content: 'THE ORIGINAL' },
      { role: 'assistant', content: 'It fails on line 3.' },
      client[2],
    ]);
  });

  it('a call left at the round limit on a message without tool_calls gets them, answered before the next user message', () => {
    const r1 = openAiCompletion('', [expand]);
    const r2 = openAiCompletion('One more.', [{ ...expand, id: 'call_y' }]);
    const trail = buildTrail('openai', [round(r1, [result('call_x', 'A')]), round(r2, [result('call_y', 'B')])])!;
    const client = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'One more.' },
      { role: 'user', content: 'and?' },
    ];
    const { sent } = reinsert('openai', openAiBody(client), trail);
    const messages = (sent.messages as Json[]).slice(1);
    expect(messages.map((m) => [m.role, m.tool_call_id ?? m.content])).toEqual([
      ['user', 'go'],
      ['assistant', ''],
      ['tool', 'call_x'],
      ['assistant', 'One more.'],
      ['tool', 'call_y'],
      ['user', 'and?'],
    ]);
    expect((messages[3]!.tool_calls as Json[]).map((c) => c.id)).toEqual(['call_y']);
  });
});

describe('frozen, found and replayed identically', () => {
  it('is found by the anchor of the message the client echoes, survives a round trip through the store text, and nothing else anchors', () => {
    const answer = anthropicMessage([{ type: 'text', text: 'Looking.' }, readUse, expandUse('toolu_x')]);
    const trail = buildTrail('anthropic', [round(answer, [result('toolu_x')])])!;
    expect(parseTrail(JSON.stringify(trail))).toEqual(trail);
    // A client re-serialising the block with fields the SDK adds still anchors the same message.
    const echoed = { role: 'assistant', content: [{ type: 'text', text: 'Looking.', citations: null }, readUse] };
    expect(messageAnchor('anthropic', echoed)).toBe(trail.anchor);
    expect(messageAnchor('anthropic', { role: 'user', content: echoed.content })).toBeNull();
    expect(buildTrail('anthropic', [round(anthropicMessage([{ type: 'text', text: 'no expand' }]))])).toBeNull();
    const view = decodeRequest('anthropic', JSON.stringify(anthropicBody([{ role: 'user', content: 'go' }, echoed])));
    expect(trailKeys(view)).toEqual([trail.anchor]);
  });

  it('a warm turn that reuses the previous turn output (turn cache) sends the same re-inserted bytes as a full encode', () => {
    const answer = anthropicMessage([{ type: 'text', text: 'Looking.' }, readUse, expandUse('toolu_x')]);
    const trail = buildTrail('anthropic', [round(answer, [result('toolu_x')])])!;
    const turn = (n: number): string => {
      const messages: Json[] = [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, readUse] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_read', content: 'x' }] },
      ];
      for (let k = 0; k < n; k++) messages.push({ role: 'assistant', content: `a${k}` }, { role: 'user', content: `u${k}` });
      // A long system prompt, as agents send: the turn cache keys on the body's first 2 KB.
      return JSON.stringify({ system: 'You are an agent. '.repeat(200), ...anthropicBody(messages) });
    };
    const cache = new TurnCache();
    for (let n = 0; n < 4; n++) {
      const decoded = cache.decode('anthropic', turn(n), 't');
      const opts = { injectExpand: false, trails: trailEdits(decoded.view, snapshotOf(trail)) };
      const viaCache = cache.encode(decoded, decoded.view.messages, opts, 't').raw;
      const full = decodeRequest('anthropic', turn(n));
      expect([n, viaCache]).toEqual([
        n,
        encodeRequest(full, full.messages, { injectExpand: false, trails: trailEdits(full, snapshotOf(trail)) }).raw,
      ]);
      expect(viaCache).toContain('"toolu_x"');
      if (n > 0) expect(decoded.reuse).not.toBeNull();
    }
  });
});
