// The money gate, in the test tier: trajectories shaped like real models' sessions (text before
// tool calls, parallel calls, pretty-printed JSON, first offload on turn 2–4; bench/trajectories.ts)
// replayed through the real request path for every preset in every dialect (Responses: the OpenAI
// session as a Codex-like client sends it, bench/responses-body.ts). Any cache bust — a
// changed message prefix or a changed tools/system head while the provider still held it — or a
// session billed more than without the gateway fails it. The full figures are `npm run bench --
// billing`.
import { PRESET_NAMES, type Dialect } from '@context-guru/components';
import { trajectorySession } from '../../../bench/billing.bench';
import { replaySession } from '../../../bench/billing-replay';
import { trajectories } from '../../../bench/trajectories';

jest.setTimeout(120_000);

const sessions = trajectories().map(trajectorySession);

/**
 * Known misses of the target, measured and bounded rather than hidden: on `late-4` (first offload
 * on turn 4) balanced and mcp save less than the session-stable expand tool costs on every turn
 * from the first. Measured with the 53/59-token tool: +0.63 % over bypass on Anthropic, +1.08 % on
 * OpenAI (its 128-token cache steps shift with the tool's tokens; the Responses replay of the same
 * sessions stays within OpenAI's bound); +1.20 % / +1.41 % with the
 * earlier 100/106-token wording. A miss growing past its bound, a new miss, or this one
 * disappearing (delete the entry) fails the gate. See README "Known gaps".
 */
const LATE_4_OVER: Record<Dialect, number> = { anthropic: 0.0075, openai: 0.012, responses: 0.012 };
const KNOWN_OVER_BYPASS: Record<string, Record<Dialect, number>> = { 'balanced/late-4': LATE_4_OVER, 'mcp/late-4': LATE_4_OVER };

function verdict(dialect: Dialect, preset: string, session: string, withUsd: number, withoutUsd: number): string {
  const over = withUsd / withoutUsd - 1;
  const bound = KNOWN_OVER_BYPASS[`${preset}/${session}`]?.[dialect];
  if (bound !== undefined) return over > 1e-9 && over <= bound ? 'ok' : `known miss out of its bound: ${(over * 100).toFixed(2)} %`;
  return withUsd <= withoutUsd + 1e-9 ? 'ok' : `billed ${withUsd} > ${withoutUsd}`;
}

describe.each(['anthropic', 'openai', 'responses'] as const)('billing replay on %s', (dialect) => {
  it.each(PRESET_NAMES)('%s: zero busts and never billed above bypass, on every session', async (preset) => {
    const results: Array<[string, number, number, string]> = [];
    for (const spec of sessions) {
      const b = await replaySession({ name: preset, preset }, dialect, spec, 'steady');
      results.push([spec.name, b.prefixBusts, b.headBusts, verdict(dialect, preset, spec.name, b.with.usd, b.without.usd)]);
    }
    expect(results).toEqual(sessions.map((s) => [s.name, 0, 0, 'ok']));
  });
});
