// The money gate, in the test tier: trajectories shaped like real models' sessions (text before
// tool calls, parallel calls, pretty-printed JSON, first offload on turn 2–4; bench/trajectories.ts)
// replayed through the real request path for every preset in both dialects. Any cache bust — a
// changed message prefix or a changed tools/system head while the provider still held it — or a
// session billed more than without the gateway fails it. The full figures are `npm run bench --
// billing`.
import { PRESET_NAMES } from '@context-guru/components';
import { trajectorySession } from '../../../bench/billing.bench';
import { replaySession } from '../../../bench/billing-replay';
import { trajectories } from '../../../bench/trajectories';

jest.setTimeout(120_000);

const sessions = trajectories().map(trajectorySession);

describe.each(['anthropic', 'openai'] as const)('billing replay on %s', (dialect) => {
  it.each(PRESET_NAMES)('%s: zero busts and never billed above bypass, on every session', async (preset) => {
    const results: Array<[string, number, number, string]> = [];
    for (const spec of sessions) {
      const b = await replaySession({ name: preset, preset }, dialect, spec, 'steady');
      results.push([spec.name, b.prefixBusts, b.headBusts, b.with.usd <= b.without.usd + 1e-9 ? 'ok' : `billed ${b.with.usd} > ${b.without.usd}`]);
    }
    expect(results).toEqual(sessions.map((s) => [s.name, 0, 0, 'ok']));
  });
});
