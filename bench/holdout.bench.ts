// `npm run bench -- holdout`: measured savings against a holdout on a replay of many agent sessions
// (bench/holdout-replay.ts) — the treated-vs-holdout saving the gateway measures from the provider's
// usage, with its 95 % interval, beside the saving the billing replay computes for the same traffic.
// HOLDOUT_SESSIONS (default 250) sets the number of sessions per row.
import type { Dialect } from '@context-guru/components';
import { table } from './bench-util';
import { replaySessions, runHoldoutReplay } from './holdout-replay';

const ROWS: Array<{ preset: string; dialect: Dialect }> = [
  { preset: 'balanced', dialect: 'anthropic' },
  { preset: 'agent', dialect: 'openai' },
];
const FRACTION = 0.2;

const usd = (x: number) => `$${x.toFixed(2)}`;

export async function runHoldout(): Promise<string> {
  const n = Number(process.env.HOLDOUT_SESSIONS ?? 250);
  const specs = replaySessions(n);
  const rows: string[][] = [];
  for (const row of ROWS) {
    const r = await runHoldoutReplay({ ...row, fraction: FRACTION, specs });
    const m = r.measured;
    rows.push([
      row.preset,
      row.dialect,
      `${m.sessions} (${m.treated.sessions} / ${m.holdout.sessions})`,
      String(r.turns),
      `${m.saving_pct} %`,
      `${m.interval_low_pct} … ${m.interval_high_pct} %`,
      m.verdict,
      `${r.simulatedSavingPct} %`,
      r.contains ? 'yes' : '**no**',
      `${m.treated.usd_per_mtok} / ${m.holdout.usd_per_mtok}`,
      `${usd(r.arms.treated.measuredUsd)} = ${usd(r.arms.treated.simulatedUsd)}; ${usd(r.arms.holdout.measuredUsd)} = ${usd(r.arms.holdout.simulatedUsd)} (max gap ${r.maxSessionGap.toExponential(1)})`,
      `${r.seconds.toFixed(0)} s`,
    ]);
  }
  const header = [
    'preset',
    'dialect',
    'sessions (treated / holdout)',
    'turns',
    'measured saving',
    '95 % interval',
    'verdict',
    'simulated saving (same traffic)',
    'interval contains it',
    'USD / M client tokens (treated / holdout)',
    'measured = simulated bills (treated; holdout)',
    'time',
  ];
  return [
    `holdout: { fraction: ${FRACTION} }; ${n} generated agent sessions of 6–30 turns, each under its own credential (its own`,
    'provider cache), through the gateway over HTTP against the prompt-caching fake provider; "simulated" is the billing',
    'replay of the same sessions with and without the gateway (bench/billing-replay.ts).',
    '',
    table(header, rows),
  ].join('\n');
}
