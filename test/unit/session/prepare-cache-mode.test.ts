// CACHE_MODE through prepareRequest: under auto both dialects are cache-aware, so a warm turn never
// makes a new lossy decision inside the previous turn's messages (the gate says cached_prefix and
// only the new tail counts as attempted); off lets the same turn mask at depth.
import type { Dialect } from '@context-guru/components';
import { MemoryHotStore } from '@context-guru/storage';
import type { CacheMode } from '../../../libs/engine/src/engine.types';
import { createLogger } from '../../../libs/engine/src/logger';
import { prepareRequest } from '../../../libs/engine/src/prepare-request';
import { createTenantRuntime, loadConfigDocument } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';

const CONFIG = 'pipeline: [mask]\ncomponents:\n  mask: { keep_recent: 1, min_tokens: 50 }\n';
const steps = agentSteps(30, 53)
  .filter((s) => s.output.length > 1500)
  .slice(0, 6);

async function twoTurns(dialect: Dialect, cacheMode: CacheMode) {
  let now = 1_700_000_000_000;
  const store = new MemoryHotStore({ now: () => now });
  const tenant = createTenantRuntime('default', loadConfigDocument(undefined, CONFIG), 1);
  const deps = { store, clock: { now: () => now }, log: createLogger('error', () => undefined), injectMode: 'never' as const };
  const body = (t: number) => JSON.stringify(dialect === 'openai' ? openaiTurn(steps, t) : anthropicTurn(steps, t));
  const run = (t: number) =>
    prepareRequest(deps, {
      route: dialect,
      dialect,
      raw: body(t),
      tenant,
      pipeline: tenant.built.pipeline,
      cacheMode,
      sessionHeader: 'mode',
      bypassHeader: false,
    });
  const first = await run(1);
  now += 10_000;
  const second = await run(2);
  return { first, second, masked: (second.outgoing.match(/older tool output masked/g) ?? []).length };
}

describe.each(['anthropic', 'openai'] as const)('CACHE_MODE on %s', (dialect) => {
  it('auto: the output already sent stays verbatim (cached_prefix), only the new tail is attempted', async () => {
    const { first, second, masked } = await twoTurns(dialect, 'auto');
    expect(masked).toBe(0);
    expect(second.report.reports[0]!.gates).toEqual(expect.objectContaining({ cached_prefix: 1 }));
    // Exactly the messages the first turn did not have.
    expect(second.report.attemptedTokens).toBe(second.report.tokensBefore - first.report.tokensBefore);
    expect(second.report.attemptedTokens).toBeGreaterThan(0);
  });

  it('on behaves as auto', async () => {
    expect((await twoTurns(dialect, 'on')).masked).toBe(0);
  });

  it('off: the same turn masks the older output at depth and attempts everything', async () => {
    const { second, masked } = await twoTurns(dialect, 'off');
    expect(masked).toBe(1);
    expect(second.report.attemptedTokens).toBe(second.report.tokensBefore);
  });
});
