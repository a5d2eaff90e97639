// The measured saving on a replay, bounded (`npm run bench -- holdout` is the full run): 36 agent
// sessions through the gateway (preset agent, holdout {fraction: 0.2}) against the prompt-caching
// fake provider. /stats must show a measured saving whose interval contains the saving the billing
// replay computes for the same traffic, and each arm's measured bill must be what the billing
// replay bills those sessions (treated: with the gateway; holdout: without it).
import { replayArm, replaySessions, runHoldoutReplay, type HoldoutReplay } from '../../bench/holdout-replay';

jest.setTimeout(600_000);

const SESSIONS = 36;
const FRACTION = 0.2;
const specs = replaySessions(SESSIONS, 14);
let r: HoldoutReplay;

beforeAll(async () => {
  r = await runHoldoutReplay({ dialect: 'anthropic', preset: 'agent', fraction: FRACTION, specs });
});

it('splits the sessions by the arm rule and measures every one of them', () => {
  const held = specs.filter((_, i) => replayArm(i, FRACTION) === 'holdout').length;
  expect(held).toBeGreaterThanOrEqual(5);
  expect(r.measured).toMatchObject({ fraction: FRACTION, version: 1, sessions: SESSIONS });
  expect([r.measured.treated.sessions, r.measured.holdout.sessions]).toEqual([SESSIONS - held, held]);
  expect(r.measured.treated.turns + r.measured.holdout.turns).toBe(specs.reduce((n, s) => n + s.turns, 0));
});

it("measures each arm's bill exactly as the billing replay bills those sessions", () => {
  for (const arm of [r.arms.treated, r.arms.holdout])
    expect(Math.abs(arm.measuredUsd - arm.simulatedUsd) / arm.simulatedUsd).toBeLessThan(1e-9);
  expect(r.maxSessionGap).toBeLessThan(1e-9);
});

it('shows a measured saving whose 95 % interval contains the simulated saving of the same traffic', () => {
  const m = r.measured;
  process.stdout.write(`holdout replay: measured ${m.summary}; simulated ${r.simulatedSavingPct} %\n`);
  expect(r.simulatedSavingPct).toBeGreaterThan(5);
  expect(m.saving_pct).not.toBeNull();
  expect(m.interval_low_pct).not.toBeNull();
  expect(m.interval_low_pct!).toBeLessThanOrEqual(r.simulatedSavingPct);
  expect(m.interval_high_pct!).toBeGreaterThanOrEqual(r.simulatedSavingPct);
  expect(r.contains).toBe(true);
  expect(m.verdict).toBe('saving');
});
