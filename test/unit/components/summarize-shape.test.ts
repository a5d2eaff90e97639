// Summarize's output must reach the provider in a shape it accepts. Over 500 generated transcripts
// (both dialects, random tool exchanges) and every boundary position (every keep_last), the body
// the gateway would forward passes the provider shape validator, the summary is never dropped by
// the write-back, and every surviving message keeps its received bytes — the client's newest
// keep_last messages among them.
import { Pipeline, type ModelClient } from '@context-guru/components';
import { summarizeComponent } from '../../../libs/components/src/offload/summarize.component';
import { decodeRequest, encodeRequest, messageOrigin } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { testCtx } from '../../support/ctx';
import { flatten, mulberry32 } from '../../support/random-bodies';
import { randomConversation, realToolOutput } from '../../support/random-conversations';

const SUMMARIZER: ModelClient = {
  id: 'fake:summarizer',
  complete: async () => ({
    text: '<summary>Ran pytest: two parser tests fail on off-by-one field counts. Read the parser and the HTTP client. Next: fix split().</summary>',
    inputTokens: 0,
    outputTokens: 0,
    truncated: false,
  }),
};

const TRANSCRIPTS = 500;

describe('summarize provider shape', () => {
  it(`passes the validator at every boundary of ${TRANSCRIPTS} generated transcripts`, async () => {
    let positions = 0;
    let acted = 0;
    for (let t = 0; t < TRANSCRIPTS; t++) {
      const dialect = t % 2 ? 'anthropic' : 'openai';
      const gen = randomConversation(dialect, mulberry32(7000 + t), realToolOutput);
      const raw = flatten(gen.root, gen.slots, new Map());
      const view = decodeRequest(dialect, raw);
      expect(validateProviderShape(dialect, view.body)).toEqual([]);
      const bodyRaw = (b: number) => raw.slice(view.index.message(b)!.start, view.index.message(b)!.end);
      for (let keepLast = 0; keepLast <= view.messages.length; keepLast++) {
        const component = summarizeComponent.create(
          summarizeComponent.options({ keep_last: keepLast, min_tokens: 0, model: { source: 'config' } }, 's'),
        );
        // keep_last counts the client's messages, as the gateway tells the component.
        const ctx = { ...testCtx({ provider: dialect }), models: { config: SUMMARIZER }, origin: messageOrigin(view) };
        const result = await new Pipeline([component]).run(view.messages, ctx);
        const report = result.reports[0]!;
        expect(report.reverted).toBe(false);
        const encoded = encodeRequest(view, result.messages, { injectExpand: report.keys.length > 0 });
        const sent = JSON.parse(encoded.raw) as { messages: unknown[] };
        const problems = validateProviderShape(dialect, sent);
        if (problems.length) throw new Error(`${dialect} transcript ${t}, keep_last ${keepLast}: ${problems.join('; ')}`);
        positions++;
        if (result.messages.length === view.messages.length) continue;
        acted++;
        // The write-back kept the restructuring: nothing discarded, the summary is in the body.
        expect(encoded.discarded).toEqual([]);
        expect(encoded.raw).toContain('=== History Summary ===');
        expect(encoded.raw).toContain(`<<cg:${report.keys[0]}>>`);
        // Every body message after the cut is forwarded as received, byte for byte.
        const cut = result.messages.findIndex((m) => typeof m.content === 'string' && m.content.startsWith('=== History Summary ==='));
        const firstKept = view.slots[view.messages.length - (result.messages.length - cut - 1)]!.msg;
        const total = (view.body.messages as unknown[]).length;
        for (let b = firstKept; b < total; b++) expect(encoded.raw).toContain(bodyRaw(b));
        // …and those include the client's newest keep_last messages.
        expect(firstKept).toBeLessThanOrEqual(total - keepLast);
        expect(sent.messages.length).toBeLessThan((view.body.messages as unknown[]).length);
      }
    }
    expect(positions).toBeGreaterThan(TRANSCRIPTS * 5);
    expect(acted).toBeGreaterThan(positions / 4);
  });
});
