// The turn cache is a pure speed-up: on every turn of a session, the body it produces must be
// byte-identical to what a full decode + encode produces, whatever the pipeline did.
import { prepareRequest, type PrepareDeps, type Prepared } from '../../../libs/engine/src/prepare-request';
import { createTenantRuntime, type TenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { TurnCache } from '../../../libs/engine/src/wire/turn-cache';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';
import { turnDeps, withMovingBreakpoint } from '../../support/turn-fixtures';

/** One body prepared with the turn cache (`a`) and without it (`b`), in one session. */
async function bothWays(
  a: PrepareDeps,
  b: PrepareDeps,
  dialect: 'openai' | 'anthropic',
  raw: string,
  tenant: TenantRuntime,
): Promise<[Prepared, Prepared]> {
  const input = { route: dialect, dialect, raw, tenant, pipeline: tenant.built.pipeline, cacheMode: 'auto' as const, bypassHeader: false };
  return [await prepareRequest(a, { ...input, sessionHeader: 'same' }), await prepareRequest(b, { ...input, sessionHeader: 'same' })];
}

describe('the turn cache', () => {
  for (const dialect of ['openai', 'anthropic'] as const) {
    for (const preset of ['agent', 'balanced', 'safe']) {
      it(`${dialect}/${preset}: every turn's body equals the full decode + encode`, async () => {
        const steps = agentSteps(45, dialect === 'openai' ? 21 : 22);
        const tenant = createTenantRuntime(
          't',
          { preset, pipeline: preset === 'agent' ? ['format', 'dedup', 'collapse', 'mask', 'cacheinject'] : undefined },
          1,
        );
        const cache = new TurnCache();
        const a = turnDeps(cache);
        const b = turnDeps();
        for (let t = 1; t <= 45; t++) {
          const body = dialect === 'openai' ? openaiTurn(steps, t) : withMovingBreakpoint(anthropicTurn(steps, t));
          // Every fifth turn the client changes something at depth (a compaction-like rewrite).
          if (t % 15 === 0 && body.messages.length > 4) (body.messages[2] as { content: unknown }).content = 'rewritten earlier message';
          // Multi-byte text, and three interleaved variants of the first message: reuse must come
          // from the entry whose bytes really match (turn t-3), never from the previous turn.
          (body.messages[0] as { content: unknown }).content = `Fix the parser — ünïcödé 🚀 variant ${t % 3}`;
          const [x, y] = await bothWays(a, b, dialect, JSON.stringify(body), tenant);
          expect(x.outgoing).toBe(y.outgoing);
          expect(x.advertised).toBe(y.advertised);
        }
        expect(cache.hits).toBeGreaterThan(30);
      });
    }
  }

  for (const dialect of ['openai', 'anthropic'] as const) {
    it(`${dialect}: with \`tools\` ahead of the messages, the expand tool stays in the reused prefix`, async () => {
      // As the real harnesses send it: the expand tool is inserted before every message, and a
      // warm turn still encodes only what is new — with the same bytes as a full encode.
      const steps = agentSteps(30, 5);
      const tenant = createTenantRuntime('t', { preset: 'agent' }, 1);
      const cache = new TurnCache();
      const [a, b] = [turnDeps(cache), turnDeps()];
      for (let t = 1; t <= 30; t++) {
        const { messages, ...head } = dialect === 'openai' ? openaiTurn(steps, t) : withMovingBreakpoint(anthropicTurn(steps, t));
        const raw = JSON.stringify({ ...head, messages });
        expect(raw.indexOf('"tools"')).toBeLessThan(raw.indexOf('"messages"'));
        const [x, y] = await bothWays(a, b, dialect, raw, tenant);
        expect(x.outgoing).toBe(y.outgoing);
        expect(x.advertised).toBe(true);
      }
      expect(cache.prefixReuses).toBeGreaterThan(20);
    });
  }

  it('falls back to a full decode (and its precise error) when the new part is malformed', async () => {
    const steps = agentSteps(6, 3);
    const tenant = createTenantRuntime('t', { preset: 'agent' }, 1);
    const d = turnDeps(new TurnCache());
    const first = JSON.stringify(openaiTurn(steps, 5));
    await prepareRequest(d, {
      route: 'openai',
      dialect: 'openai',
      raw: first,
      tenant,
      pipeline: tenant.built.pipeline,
      cacheMode: 'auto',
      bypassHeader: false,
    });
    const broken = `${first.slice(0, first.lastIndexOf(']'))},{"role":"user","content":"x"},]}`;
    await expect(
      prepareRequest(d, {
        route: 'openai',
        dialect: 'openai',
        raw: broken,
        tenant,
        pipeline: tenant.built.pipeline,
        cacheMode: 'auto',
        bypassHeader: false,
      }),
    ).rejects.toThrow(/position \d+/);
  });
});
