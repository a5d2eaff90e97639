// The treated-vs-holdout estimate on synthetic sessions whose true effect is known: the interval
// covers the effect about as often as it claims, says "not significant" when there is none, is
// fair to sessions of different lengths, and is deterministic.
import { estimateSavings, type SessionSample } from '@context-guru/storage';
import { mulberry32, type Rng } from '../../support/prng';

/** A session of `turns` turns; its input grows like an agent transcript (every turn re-sends the prefix). */
function session(rng: Rng, arm: SessionSample['arm'], usdPerMtok: number, lengthScale = 1): SessionSample {
  const turns = 3 + Math.floor(rng() * 40 * lengthScale);
  const perTurn = 800 + rng() * 4000;
  const inputTokens = Math.round((perTurn * turns * (turns + 1)) / 2);
  // Sessions differ in how cacheable their traffic is: ±35 % around the arm's rate.
  const noise = 0.65 + rng() * 0.7;
  return { arm, turns, inputTokens, billedUsd: (inputTokens / 1e6) * usdPerMtok * noise };
}

function traffic(seed: number, n: number, holdoutShare: number, effect: number, holdoutLength = 1): SessionSample[] {
  const rng = mulberry32(seed);
  const out: SessionSample[] = [];
  for (let i = 0; i < n; i++) {
    const held = rng() < holdoutShare;
    out.push(held ? session(rng, 'holdout', 1.2, holdoutLength) : session(rng, 'treated', 1.2 * (1 - effect)));
  }
  return out;
}

describe('estimateSavings', () => {
  it('gives no interval when asked for no resamples (it used to report bounds of undefined as not significant)', () => {
    const e = estimateSavings(traffic(1, 400, 0.2, 0.3), { resamples: 0 });
    expect(e).toMatchObject({ verdict: 'insufficient_data', interval_low_pct: null, interval_high_pct: null, interval_pct: null });
  });

  it('finds a known 30 % saving: the interval covers it and excludes 0', () => {
    const e = estimateSavings(traffic(1, 400, 0.2, 0.3));
    expect(e.verdict).toBe('saving');
    expect(e.significant).toBe(true);
    expect(e.interval_low_pct!).toBeLessThanOrEqual(30);
    expect(e.interval_high_pct!).toBeGreaterThanOrEqual(30);
    expect(e.interval_low_pct!).toBeGreaterThan(0);
    expect(Math.abs(e.saving_pct! - 30)).toBeLessThan(e.interval_pct! * 2);
    expect(e.sessions).toBe(e.treated.sessions + e.holdout.sessions);
    expect(e.summary).toMatch(/^saved \d+(\.\d+)? % ± \d+(\.\d+)? % on 400 sessions \(\d+ treated, \d+ holdout\)/);
  });

  it('says "not yet significant" when there is no effect', () => {
    const e = estimateSavings(traffic(2, 300, 0.2, 0));
    expect(e.verdict).toBe('not_significant');
    expect(e.significant).toBe(false);
    expect(e.interval_low_pct!).toBeLessThan(0);
    expect(e.interval_high_pct!).toBeGreaterThan(0);
    expect(e.summary).toMatch(/^difference not yet significant: .* contains 0$/);
  });

  it('covers the true effect in about 95 % of repeated experiments, and 0 in about 95 % when there is none', () => {
    const runs = 300;
    let covered = 0;
    let zeroCovered = 0;
    for (let r = 0; r < runs; r++) {
      const withEffect = estimateSavings(traffic(1000 + r, 150, 0.3, 0.25), { resamples: 400 });
      if (withEffect.interval_low_pct! <= 25 && withEffect.interval_high_pct! >= 25) covered++;
      const without = estimateSavings(traffic(5000 + r, 150, 0.3, 0), { resamples: 400 });
      if (!without.significant) zeroCovered++;
    }
    // A percentile bootstrap is a little optimistic at this size (measured: 93 % at 150 sessions,
    // 95 % at 400); Binomial(300, 0.93) stays within 0.89..0.97 but for 1 run in 1000.
    expect(covered / runs).toBeGreaterThan(0.89);
    expect(covered / runs).toBeLessThan(0.985);
    expect(zeroCovered / runs).toBeGreaterThan(0.89);
  });

  it('is fair to sessions of different lengths: longer holdout sessions alone are no saving', () => {
    // Holdout sessions here run about twice as long, at the same price per input token.
    const rows = traffic(3, 400, 0.25, 0, 2);
    const e = estimateSavings(rows);
    expect(e.holdout.usd_per_session!).toBeGreaterThan(e.treated.usd_per_session! * 1.5);
    expect(e.verdict).toBe('not_significant');
  });

  it('gives no interval below the minimum sessions per arm, but still the point estimate', () => {
    const rows = traffic(4, 200, 0.2, 0.3).filter((s, i) => s.arm === 'treated' || i < 20);
    const held = rows.filter((s) => s.arm === 'holdout').length;
    expect(held).toBeLessThan(5);
    const e = estimateSavings(rows);
    expect([e.verdict, e.significant, e.interval_low_pct, e.interval_pct]).toEqual(['insufficient_data', false, null, null]);
    expect(e.saving_pct).not.toBeNull();
    expect(estimateSavings([]).saving_pct).toBeNull();
  });

  it('is deterministic: the same sessions in any order give the same figures', () => {
    const rows = traffic(5, 120, 0.3, 0.2);
    const shuffled = [...rows];
    const rng = mulberry32(9);
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    expect(estimateSavings(shuffled)).toEqual(estimateSavings(rows));
  });

  it('reports per-session, per-turn and per-million-token figures of each arm', () => {
    const rows: SessionSample[] = [
      { arm: 'treated', billedUsd: 1, inputTokens: 1_000_000, turns: 4 },
      { arm: 'treated', billedUsd: 3, inputTokens: 1_000_000, turns: 6 },
      { arm: 'holdout', billedUsd: 5, inputTokens: 2_000_000, turns: 10 },
    ];
    const e = estimateSavings(rows);
    expect(e.treated).toEqual({
      sessions: 2,
      turns: 10,
      billed_usd: 4,
      input_tokens: 2_000_000,
      usd_per_session: 2,
      usd_per_turn: 0.4,
      usd_per_mtok: 2,
    });
    expect(e.holdout.usd_per_mtok).toBe(2.5);
    expect(e.saving_pct).toBe(20);
  });
});
