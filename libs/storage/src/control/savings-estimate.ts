// The measured saving of a tenant's config version: treated sessions against holdout sessions,
// from what the provider billed. Sessions differ in length and size, so each arm is compared per
// input token the client sent (billed USD / client input tokens, a ratio of sums over the arm's
// sessions — the same normalisation for both arms, and one the gateway cannot move: it is counted
// before the pipeline). The interval is a percentile bootstrap over sessions (sessions, not turns,
// are the independent units: a session's turns share its prefix and its cache), seeded so the same
// rows always give the same interval. Pure functions: /stats, the admin API and the metrics agree.
import { itemAt, type Arm } from '@context-guru/components';

export interface SessionSample {
  arm: Arm;
  billedUsd: number;
  inputTokens: number;
  turns: number;
}

export interface ArmFigures {
  sessions: number;
  turns: number;
  billed_usd: number;
  input_tokens: number;
  usd_per_session: number | null;
  usd_per_turn: number | null;
  /** Billed USD per million input tokens the client sent: the compared figure. */
  usd_per_mtok: number | null;
}

/** saving: the interval lies above 0; costlier: below; not_significant: it contains 0. */
export type SavingsVerdict = 'saving' | 'costlier' | 'not_significant' | 'insufficient_data';

export interface SavingsEstimate {
  sessions: number;
  treated: ArmFigures;
  holdout: ArmFigures;
  /** 1 − treated/holdout USD per input token, in percent (positive: the gateway saved). */
  saving_pct: number | null;
  interval_low_pct: number | null;
  interval_high_pct: number | null;
  /** Half the interval's width (the "± x %" of a summary line). */
  interval_pct: number | null;
  confidence: number;
  significant: boolean;
  verdict: SavingsVerdict;
  summary: string;
  method: { compared: string; interval: string; resamples: number; seed: number; min_sessions_per_arm: number };
}

export interface EstimateOptions {
  resamples?: number;
  seed?: number;
  confidence?: number;
  /** Fewer sessions than this in either arm: no interval (a bootstrap of a handful is too narrow). */
  minSessionsPerArm?: number;
}

export const ESTIMATE_DEFAULTS = { resamples: 2000, seed: 0x5eed, confidence: 0.95, minSessionsPerArm: 5 } as const;

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;
const ratio = (a: number, b: number): number | null => (b > 0 ? a / b : null);

function sums(arm: readonly SessionSample[]): { usd: number; input: number } {
  let usd = 0;
  let input = 0;
  for (const s of arm) {
    usd += s.billedUsd;
    input += s.inputTokens;
  }
  return { usd, input };
}

function figures(arm: readonly SessionSample[]): ArmFigures {
  const { usd, input } = sums(arm);
  let turns = 0;
  for (const s of arm) turns += s.turns;
  const per = (d: number, scale = 1, digits = 6) => {
    const r = ratio(usd * scale, d);
    return r === null ? null : round(r, digits);
  };
  return {
    sessions: arm.length,
    turns,
    billed_usd: round(usd, 6),
    input_tokens: input,
    usd_per_session: per(arm.length),
    usd_per_turn: per(turns),
    usd_per_mtok: per(input, 1e6, 4),
  };
}

/** 1 − (Σusd_t/Σin_t)/(Σusd_h/Σin_h), or null when either arm has nothing to divide by. */
function saving(tUsd: number, tIn: number, hUsd: number, hIn: number): number | null {
  const t = ratio(tUsd, tIn);
  const h = ratio(hUsd, hIn);
  return t === null || h === null || h === 0 ? null : 1 - t / h;
}

interface Columns {
  usd: Float64Array;
  input: Float64Array;
}

function columns(arm: readonly SessionSample[]): Columns {
  // Sorted by value: the estimate depends on the set of sessions, never on the order rows arrive in.
  const sorted = [...arm].sort((a, b) => a.billedUsd - b.billedUsd || a.inputTokens - b.inputTokens || a.turns - b.turns);
  return { usd: Float64Array.from(sorted, (s) => s.billedUsd), input: Float64Array.from(sorted, (s) => s.inputTokens) };
}

/**
 * Sums of one resample of an arm (n draws with replacement). The draws come from xorshift32
 * inlined, with no Math call in the loop (a call per draw costs more than the loop; under Jest's
 * VM context a built-in call costs a hundred times more): `state` carries its state between calls.
 */
function resampledSums(c: Columns, state: { x: number }): [number, number] {
  const n = c.usd.length;
  let x = state.x;
  let usd = 0;
  let input = 0;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const j = (((x >>> 0) / 4294967296) * n) | 0; // in [0, n): the quotient is below 1
    const u = c.usd[j];
    const t = c.input[j];
    if (u === undefined || t === undefined) throw new Error(`resample index ${j} outside ${n} sessions`);
    usd += u;
    input += t;
  }
  state.x = x;
  return [usd, input];
}

/** The percentile bootstrap interval of the saving: each resample draws each arm's sessions with replacement. */
export function bootstrapInterval(
  treated: readonly SessionSample[],
  holdout: readonly SessionSample[],
  o: { resamples: number; seed: number; confidence: number },
): { low: number; high: number } | null {
  const t = columns(treated);
  const h = columns(holdout);
  const state = { x: o.seed | 0 || 1 }; // xorshift never leaves 0
  const draws: number[] = [];
  for (let b = 0; b < o.resamples; b++) {
    const [tu, ti] = resampledSums(t, state);
    const [hu, hi] = resampledSums(h, state);
    const s = saving(tu, ti, hu, hi);
    if (s !== null) draws.push(s);
  }
  // No draw at all (resamples 0) is no interval either, not one of undefined bounds.
  if (draws.length === 0 || draws.length < o.resamples / 2) return null;
  draws.sort((a, b) => a - b);
  const alpha = (1 - o.confidence) / 2;
  const at = (q: number) =>
    itemAt(draws, Math.min(draws.length - 1, Math.max(0, Math.round(q * (draws.length - 1)))), 'bootstrap percentile');
  return { low: at(alpha), high: at(1 - alpha) };
}

export function estimateSavings(samples: readonly SessionSample[], options: EstimateOptions = {}): SavingsEstimate {
  const o = { ...ESTIMATE_DEFAULTS, ...options };
  const treated = samples.filter((s) => s.arm === 'treated');
  const holdout = samples.filter((s) => s.arm === 'holdout');
  const t = figures(treated);
  const h = figures(holdout);
  const [ts, hs] = [sums(treated), sums(holdout)];
  const point = saving(ts.usd, ts.input, hs.usd, hs.input);
  const enough = treated.length >= o.minSessionsPerArm && holdout.length >= o.minSessionsPerArm;
  const interval = enough && point !== null ? bootstrapInterval(treated, holdout, o) : null;
  const pct = (x: number | null) => (x === null ? null : round(x * 100, 2));
  const verdict: SavingsVerdict = !interval
    ? 'insufficient_data'
    : interval.low > 0
      ? 'saving'
      : interval.high < 0
        ? 'costlier'
        : 'not_significant';
  const est: SavingsEstimate = {
    sessions: samples.length,
    treated: t,
    holdout: h,
    saving_pct: pct(point),
    interval_low_pct: pct(interval?.low ?? null),
    interval_high_pct: pct(interval?.high ?? null),
    interval_pct: interval ? round(((interval.high - interval.low) / 2) * 100, 2) : null,
    confidence: o.confidence,
    significant: verdict === 'saving' || verdict === 'costlier',
    verdict,
    summary: '',
    method: {
      compared: 'billed USD per input token the client sent (ratio of sums per arm)',
      interval: 'percentile bootstrap over sessions',
      resamples: o.resamples,
      seed: o.seed,
      min_sessions_per_arm: o.minSessionsPerArm,
    },
  };
  est.summary = summaryLine(est);
  return est;
}

function summaryLine(e: SavingsEstimate): string {
  const on = `on ${e.sessions} sessions (${e.treated.sessions} treated, ${e.holdout.sessions} holdout)`;
  if (e.verdict === 'insufficient_data') {
    return `not enough sessions yet ${on}: at least ${e.method.min_sessions_per_arm} per arm are needed for an interval`;
  }
  const range = `${Math.round(e.confidence * 100)} % interval ${e.interval_low_pct} % to ${e.interval_high_pct} %`;
  if (e.verdict === 'saving') return `saved ${e.saving_pct} % ± ${e.interval_pct} % ${on}; ${range}`;
  if (e.verdict === 'costlier') return `cost ${-(e.saving_pct ?? 0)} % more ± ${e.interval_pct} % ${on}; ${range}`;
  return `difference not yet significant: ${e.saving_pct} % ± ${e.interval_pct} % ${on}; ${range} contains 0`;
}
