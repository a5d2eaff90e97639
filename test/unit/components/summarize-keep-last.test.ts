// summarize through the wire, turn after turn (turn cache, checkpoint replay, re-summaries): the
// body messages holding the last keep_last messages reach the provider byte-identical, the
// client's own cache_control on them included.
import { buildPipeline, type ModelClient } from '@context-guru/components';
import { TurnCache } from '../../../apps/gateway/src/wire/turn-cache';
import { validateProviderShape } from '../../../apps/gateway/src/wire/shape-validator';
import { testCtx } from '../../support/ctx';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';

const client: ModelClient = {
  id: 'fake:summarizer',
  complete: async () => ({
    text: '<summary>The agent ran the failing tests, read the parser and fixed an off-by-one.</summary>',
    inputTokens: 1,
    outputTokens: 1,
    truncated: false,
  }),
};

describe.each(['anthropic', 'openai'] as const)('summarize keep_last (%s)', (dialect) => {
  it.each([
    [2, 1],
    [3, 1],
    [4, 1],
    [3, 2],
    [4, 3],
  ])(
    'keep_last %i, client breakpoints on the newest %i messages: the kept tail is byte-identical on every summarized turn',
    async (keep, marks) => {
      const steps = agentSteps(20);
      const turns = new TurnCache();
      const frozen = new Map<string, string>();
      let summarized = 0;
      for (let t = 1; t <= steps.length; t++) {
        const body = (dialect === 'anthropic' ? anthropicTurn(steps, t) : openaiTurn(steps, t)) as unknown as {
          messages: Array<{ content: unknown }>;
        };
        // Breakpoints as agents move them: on the last block of the newest `marks` messages with
        // block content, so last turn's newest message loses its breakpoint this turn.
        let placed = 0;
        for (let i = body.messages.length - 1; i >= 0 && placed < marks; i--) {
          const c = body.messages[i]!.content;
          if (!Array.isArray(c) || c.length === 0) continue;
          (c[c.length - 1] as Record<string, unknown>).cache_control = { type: 'ephemeral' };
          placed++;
        }
        const raw = JSON.stringify(body);
        const decoded = turns.decode(dialect, raw, 't');
        const { pipeline } = buildPipeline({
          pipeline: ['summarize'],
          components: {
            summarize: {
              keep_last: keep,
              min_tokens: 0,
              resummarize_tokens: 3000,
              model: { source: 'config' },
              trigger: { min_messages: 9 },
            },
          },
        });
        const ctx = { ...testCtx({ provider: dialect, snapshot: { frozen } }), models: { config: client } };
        const res = await pipeline.run(decoded.view.messages, ctx);
        for (const [k, v] of ctx.state.newFrozen) frozen.set(k, v);
        const enc = turns.encode(decoded, res.messages, { injectExpand: false }, 't');
        if (enc.raw === raw) continue;
        summarized++;
        const out = JSON.parse(enc.raw) as { messages: unknown[] };
        expect(validateProviderShape(dialect, out)).toEqual([]);
        const tailFrom = decoded.view.slots[decoded.view.slots.length - keep]!.msg;
        const tail = body.messages.slice(tailFrom).map((m) => JSON.stringify(m));
        expect(out.messages.slice(out.messages.length - tail.length).map((m) => JSON.stringify(m))).toEqual(tail);
        expect(enc.raw.endsWith(`${tail.join(',')}]}`) || enc.raw.includes(`${tail.join(',')}]`)).toBe(true);
      }
      expect(summarized).toBeGreaterThan(5);
    },
  );
});
