// Simulated billed cost with vs without the gateway, per preset and per session: generated agent
// sessions (test/support/transcripts.ts, 40–60 turns) and trajectories shaped like real models'
// (bench/trajectories.ts: text before tool calls, parallel calls, pretty-printed JSON, first
// offload on turn 2–4, real command outputs) replayed through the real request path and billed by
// the prompt-cache simulator (bench/billing-replay.ts). The money target: zero busts, and no
// session billed more with the gateway than without, for every preset.
import { countTokens, PRESET_NAMES } from '@context-guru/components';
import { StatsRollup } from '@context-guru/engine';
import type { Bill } from '../test/support/prompt-cache';
import { agentSteps, anthropicTurn, openaiTurn, type AgentStep } from '../test/support/transcripts';
import { table } from './bench-util';
import { toGeminiBody } from './gemini-body';
import { toResponsesBody } from './responses-body';
import { chosenPresets, runRealBilling } from './billing-real';
import { addBill, PAUSE_MS, replaySession, SCHEDULES, STEP_MS, zeroBill, type SessionSpec, type Variant } from './billing-replay';
import { anthropicTrajectoryBody, markNewestBlock, nextRound, openaiTrajectoryBody, trajectories, type Trajectory } from './trajectories';

type Json = Record<string, unknown>;

const VARIANTS: Variant[] = [
  ...PRESET_NAMES.map((p) => ({ name: p, preset: p })),
  { name: '[format,dedup,collapse,mask]', config: 'pipeline: [format, dedup, collapse, mask]' },
  {
    name: '[format,dedup,collapse,mask] cold_cache',
    config: 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { cold_cache: true }\n  collapse: { cold_cache: true }',
  },
];

/** The client as Claude Code behaves: breakpoints on the system prompt and on its newest block. */
function anthropicClientBody(steps: AgentStep[], t: number): Json {
  const body = anthropicTurn(steps, t) as Json;
  body.system = [{ type: 'text', text: body.system as string, cache_control: { type: 'ephemeral' } }];
  markNewestBlock(body.messages as Json[]);
  return body;
}

/** A generated session of `turns` turns; the model's answer is the next tool call. */
export function generatedSession(seed: number, turns: number): SessionSpec {
  const steps = agentSteps(turns, seed);
  return {
    name: `seed-${seed}x${turns}`,
    turns,
    body: (dialect, t) =>
      dialect === 'anthropic'
        ? anthropicClientBody(steps, t)
        : dialect === 'responses'
          ? toResponsesBody(openaiTurn(steps, t))
          : dialect === 'gemini'
            ? toGeminiBody(openaiTurn(steps, t))
            : (openaiTurn(steps, t) as Json),
    output: (t) => {
      const next = steps[t];
      return next ? countTokens(JSON.stringify({ name: next.tool, input: next.args })) : 40;
    },
  };
}

/** A trajectory; the model's answer is its next round (the preamble and the calls). */
export function trajectorySession(tr: Trajectory): SessionSpec {
  return {
    name: tr.name,
    turns: tr.rounds.length,
    body: (dialect, t) =>
      dialect === 'anthropic'
        ? anthropicTrajectoryBody(tr, t)
        : dialect === 'responses'
          ? toResponsesBody(openaiTrajectoryBody(tr, t))
          : dialect === 'gemini'
            ? toGeminiBody(openaiTrajectoryBody(tr, t))
            : openaiTrajectoryBody(tr, t),
    output: (t) => {
      const next = nextRound(tr, t);
      return next ? countTokens(next.preamble + JSON.stringify(next.calls.map((c) => ({ name: c.tool, input: c.args })))) : 40;
    },
  };
}

export function billingSessions(): SessionSpec[] {
  return [generatedSession(3, 60), generatedSession(7, 50), generatedSession(11, 40), ...trajectories().map(trajectorySession)];
}

const pct = (a: number, b: number) => (b > 0 ? `${(((a - b) / b) * 100).toFixed(1)}%` : '—');
const k = (n: number) => `${(n / 1000).toFixed(0)}k`;

function savedTokens(stats: StatsRollup): { cumulative: number; unique: number } {
  const snap = stats.snapshot() as { components: Record<string, { saved_tokens: number; saved_tokens_unique: number }> };
  let cumulative = 0;
  let unique = 0;
  for (const c of Object.values(snap.components)) {
    cumulative += c.saved_tokens;
    unique += c.saved_tokens_unique;
  }
  return { cumulative, unique };
}

const CORPORA = ['both', 'real', 'generated'] as const;

/** BENCH_BILLING_CORPUS: which corpus the billing bench replays (default both). */
function corpusChoice(): (typeof CORPORA)[number] {
  const v = process.env.BENCH_BILLING_CORPUS ?? 'both';
  const found = CORPORA.find((c) => c === v);
  if (!found) throw new Error(`BENCH_BILLING_CORPUS must be one of ${CORPORA.join(', ')}; got "${v}"`);
  return found;
}

export async function runBilling(): Promise<string> {
  const choice = corpusChoice();
  const real = choice === 'generated' ? '' : `### Real sessions\n\n${await runRealBilling()}`;
  const generated = choice === 'real' ? '' : `### Generated sessions\n\n${await runGeneratedBilling()}`;
  return [real, generated].filter(Boolean).join('\n\n');
}

async function runGeneratedBilling(): Promise<string> {
  const rows: string[][] = [];
  const sessions = billingSessions();
  const worst: string[] = [];
  const presets = chosenPresets();
  // Custom pipelines run only with the full preset list.
  const variants = process.env.BENCH_BILLING_PRESETS ? VARIANTS.filter((v) => v.preset && presets.includes(v.preset)) : VARIANTS;
  for (const v of variants) {
    for (const dialect of ['anthropic', 'openai', 'responses'] as const) {
      for (const schedule of SCHEDULES) {
        const w: Bill = zeroBill();
        const wo: Bill = zeroBill();
        const stats = new StatsRollup();
        let busts = 0;
        let heads = 0;
        let worse = 0;
        for (const spec of sessions) {
          const b = await replaySession(v, dialect, spec, schedule, stats);
          addBill(w, b.with);
          addBill(wo, b.without);
          busts += b.prefixBusts;
          heads += b.headBusts;
          if (b.with.usd > b.without.usd + 1e-9) {
            worse++;
            worst.push(`${v.name} ${dialect} ${schedule} ${spec.name}: $${b.with.usd.toFixed(4)} vs $${b.without.usd.toFixed(4)}`);
          }
        }
        const saved = savedTokens(stats);
        rows.push([
          v.name,
          dialect,
          schedule,
          k(wo.prompt),
          k(w.prompt),
          pct(w.prompt, wo.prompt),
          `${k(saved.cumulative)} / ${k(saved.unique)}`,
          `${((w.cacheRead / Math.max(1, w.prompt)) * 100).toFixed(0)}%`,
          `$${wo.usd.toFixed(2)}`,
          `$${w.usd.toFixed(2)}`,
          pct(w.usd, wo.usd),
          `${worse}/${sessions.length}`,
          String(busts),
          String(heads),
        ]);
      }
    }
  }
  const header = [
    'pipeline',
    'dialect',
    'schedule',
    'input tok without',
    'input tok with',
    'Δ tokens',
    'content saved cumul. / unique',
    'cache-read share (with)',
    'billed without',
    'billed with',
    'Δ billed',
    'sessions billed more',
    'message busts',
    'tools/system busts',
  ];
  const names = sessions.map((s) => `${s.name} (${s.turns} turns)`).join(', ');
  const worseText = worst.length
    ? `\n\nSessions billed more with the gateway:\n${worst.map((s) => `- ${s}`).join('\n')}`
    : '\n\nNo session is billed more with the gateway than without.';
  return `Sessions per row: ${names}; a turn every ${STEP_MS / 1000} s; "pause" adds one ${PAUSE_MS / 60_000}-min idle gap mid-session.\n\n${table(header, rows)}${worseText}`;
}
