// summarize through the wire, turn after turn (turn cache, checkpoint replay, re-summaries): the
// client's last keep_last messages — counted as the client sent them, not as normalized: an
// Anthropic user turn with two tool_results and a reminder is one message, three normalized —
// reach the provider byte-identical, the client's own cache_control on them included.
import { buildPipeline, type Message, type ModelClient } from '@context-guru/components';
import { TurnCache } from '../../../libs/engine/src/wire/turn-cache';
import { messageOrigin } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { tailStart } from '../../../libs/components/src/offload/summarize/span';
import { testCtx } from '../../support/ctx';
import { clientBody, sessionTranscripts } from '../../support/summarize-sessions';

const client: ModelClient = {
  id: 'fake:summarizer',
  complete: async () => ({
    text: '<summary>The agent ran the failing tests, read the parser and fixed an off-by-one.</summary>',
    inputTokens: 1,
    outputTokens: 1,
    truncated: false,
  }),
};

const SESSIONS = [
  ['anthropic', 'blocks'],
  ['anthropic', 'strings'],
  ['openai', 'strings'],
  ['openai', 'blocks'],
] as const;

describe.each(SESSIONS)('summarize keep_last (%s, %s content)', (dialect, style) => {
  it.each([
    [1, 1, 0],
    [2, 1, 0],
    [3, 1, 0],
    [3, 2, 3000],
    [4, 1, 0],
    [4, 3, 3000],
    [5, 1, 0],
    [6, 2, 0],
  ])(
    'keep_last %i, client breakpoints on the newest %i messages, resummarize_tokens %i: the client’s tail is byte-identical on every summarized turn',
    async (keep, marks, resummarize) => {
      const turns = new TurnCache();
      const frozen = new Map<string, string>();
      const { pipeline } = buildPipeline({
        pipeline: ['summarize'],
        components: {
          summarize: {
            keep_last: keep,
            min_tokens: 0,
            resummarize_tokens: resummarize,
            model: { source: 'config' },
            trigger: { min_messages: 5 },
          },
        },
      });
      let summarized = 0;
      for (const [offset, messages] of sessionTranscripts({ dialect, style, turns: 16, seed: 11, offset: keep }).entries()) {
        const body = clientBody(dialect, messages, marks);
        const raw = JSON.stringify(body);
        const decoded = turns.decode(dialect, raw, 't');
        const ctx = {
          ...testCtx({ provider: dialect, snapshot: { frozen } }),
          models: { config: client },
          origin: messageOrigin(decoded.view),
        };
        const res = await pipeline.run(decoded.view.messages, ctx);
        for (const [k, v] of ctx.state.newFrozen) frozen.set(k, v);
        const enc = turns.encode(decoded, res.messages, { injectExpand: false }, 't');
        if (enc.raw === raw) continue;
        summarized++;
        const out = JSON.parse(enc.raw) as { messages: unknown[] };
        expect(validateProviderShape(dialect, out)).toEqual([]);
        const tail = (body.messages as unknown[]).slice(-keep).map((m) => JSON.stringify(m));
        expect({ turn: offset, tail: out.messages.slice(-tail.length).map((m) => JSON.stringify(m)) }).toEqual({ turn: offset, tail });
        expect(enc.raw.includes(`${tail.join(',')}]`)).toBe(true);
      }
      expect(summarized).toBeGreaterThan(5);
    },
  );
});

describe('tailStart: where the client’s newest keep_last messages begin among the normalized ones', () => {
  const msgs = (roles: string): Message[] =>
    [...roles].map((r) => ({ role: ({ u: 'user', a: 'assistant', t: 'tool' } as const)[r as 'u'], content: 'x' }));

  it('counts an Anthropic user turn split into results and text as one client message', () => {
    // client: [u, a, u(t,t,u)] → normalized [u, a, t, t, u]
    const m = msgs('uattu');
    expect(tailStart(m, 1, { of: [0, 1, 2, 2, 2], count: 3 })).toBe(2);
    expect(tailStart(m, 2, { of: [0, 1, 2, 2, 2], count: 3 })).toBe(1);
    // Without the origin every normalized message counts as one (what it did before).
    expect(tailStart(m, 2)).toBe(3);
  });

  it('keeps the message an image-only result travels with', () => {
    // client: [u, a, u(image-only result: nothing normalized), a, u(t)] → normalized [u, a, a, t]
    const m = msgs('uaat');
    const origin = { of: [0, 1, 3, 4], count: 5 };
    expect(tailStart(m, 2, origin)).toBe(2);
    expect(tailStart(m, 3, origin)).toBe(1);
    expect(tailStart(m, 4, origin)).toBe(1);
    expect(tailStart(m, 5, origin)).toBe(0);
    expect(tailStart(m, 9, origin)).toBe(0);
    expect(tailStart(m, 0, origin)).toBe(4);
  });

  it('ignores an origin that does not describe these messages', () => {
    expect(tailStart(msgs('uat'), 1, { of: [0, 1], count: 2 })).toBe(2);
  });
});
