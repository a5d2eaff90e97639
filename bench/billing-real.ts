// The billing replay on the real corpus (bench/real-corpus.ts): every preset, both dialects,
// every real session replayed through the gateway and through bypass and billed by the
// prompt-cache simulator, one row per preset and dialect. The columns are a list of (header,
// cell) pairs over the row's totals, so a figure the replay starts returning is one entry more.
import { PRESET_NAMES, type Dialect } from '@context-guru/components';
import type { Bill } from '../test/support/prompt-cache';
import { table } from './bench-util';
import { addBill, replaySession, zeroBill, type SessionBill, type SessionSpec, type Variant } from './billing-replay';
import { realSessions } from './real-corpus';

/** One preset × dialect over every session. */
interface RealRow {
  variant: string;
  dialect: Dialect;
  sessions: number;
  turns: number;
  with: Bill;
  without: Bill;
  /** Turns that changed a prefix or head the provider still held, outside any planned rewrite. */
  busts: number;
  /** Sessions billed above bypass, and the largest excess among them (fraction of bypass). */
  dearer: number;
  worstExcess: number;
  worstSession: string;
  /** Every session billed above bypass, with its excess. */
  dearerSessions: string[];
  needles: number;
  needlesLost: number;
  needlesBehindMarker: number;
  markers: number;
  markersInexact: number;
  invalidRequests: number;
  planned: { rewrites: number; costUsd: number; savedUsd: number };
}

/** What the gateway saved against bypass, as a share of bypass (negative: it cost more). */
const saving = (gateway: number, bypass: number): string => (bypass > 0 ? `${(((bypass - gateway) / bypass) * 100).toFixed(1)}%` : '—');
const k = (n: number): string => `${(n / 1000).toFixed(0)}k`;
const usd = (n: number): string => `$${n.toFixed(2)}`;

const COLUMNS: Array<[string, (r: RealRow) => string]> = [
  ['preset', (r) => r.variant],
  ['dialect', (r) => r.dialect],
  ['billed bypass → gateway', (r) => `${usd(r.without.usd)} → ${usd(r.with.usd)}`],
  ['billed saving', (r) => saving(r.with.usd, r.without.usd)],
  ['input tokens bypass → gateway', (r) => `${k(r.without.prompt)} → ${k(r.with.prompt)}`],
  ['token saving', (r) => saving(r.with.prompt, r.without.prompt)],
  ['accidental busts', (r) => String(r.busts)],
  ['sessions dearer than bypass', (r) => `${r.dearer}/${r.sessions}`],
  ['worst excess', (r) => (r.dearer ? `+${(r.worstExcess * 100).toFixed(2)}% (${r.worstSession})` : '—')],
  ['needles lost', (r) => `${r.needlesLost}/${r.needles}`],
  ['needles one expand away', (r) => `${r.needlesBehindMarker}/${r.needles}`],
  ['markers exact', (r) => `${r.markers - r.markersInexact}/${r.markers}`],
  ['invalid requests', (r) => String(r.invalidRequests)],
  ['planned rewrites', (r) => String(r.planned.rewrites)],
  ['planned cost → saved', (r) => `${usd(r.planned.costUsd)} → ${usd(r.planned.savedUsd)}`],
  ['payback', (r) => (r.planned.costUsd > 0 ? `${(r.planned.savedUsd / r.planned.costUsd).toFixed(1)}×` : '—')],
];

function emptyRow(variant: string, dialect: Dialect): RealRow {
  return {
    variant,
    dialect,
    sessions: 0,
    turns: 0,
    with: zeroBill(),
    without: zeroBill(),
    busts: 0,
    dearer: 0,
    worstExcess: 0,
    worstSession: '',
    dearerSessions: [],
    needles: 0,
    needlesLost: 0,
    needlesBehindMarker: 0,
    markers: 0,
    markersInexact: 0,
    invalidRequests: 0,
    planned: { rewrites: 0, costUsd: 0, savedUsd: 0 },
  };
}

/** Folds one session's bill into its row. */
function addSession(row: RealRow, spec: SessionSpec, b: SessionBill): void {
  row.sessions++;
  row.turns += spec.turns;
  addBill(row.with, b.with);
  addBill(row.without, b.without);
  row.busts += b.prefixBusts + b.headBusts;
  const excess = b.with.usd / b.without.usd - 1;
  if (excess > 1e-9) {
    row.dearer++;
    row.dearerSessions.push(`${spec.name} +${(excess * 100).toFixed(2)}%`);
    if (excess > row.worstExcess) [row.worstExcess, row.worstSession] = [excess, spec.name];
  }
  row.needles += b.fidelity.needles;
  row.needlesLost += b.fidelity.needlesLost;
  row.needlesBehindMarker += b.fidelity.needlesBehindMarker;
  row.markers += b.fidelity.markers;
  row.markersInexact += b.fidelity.markersInexact;
  row.invalidRequests += b.fidelity.invalidRequests;
  row.planned.rewrites += b.planned?.rewrites ?? 0;
  row.planned.costUsd += b.planned?.costUsd ?? 0;
  row.planned.savedUsd += b.planned?.savedUsd ?? 0;
}

/** Every variant × dialect over the sessions, in the steady schedule. */
async function replayRows(variants: readonly Variant[], sessions: readonly SessionSpec[]): Promise<RealRow[]> {
  const rows: RealRow[] = [];
  for (const v of variants) {
    for (const dialect of ['anthropic', 'openai', 'responses', 'gemini'] as const) {
      const row = emptyRow(v.name, dialect);
      for (const spec of sessions) addSession(row, spec, await replaySession(v, dialect, spec, 'steady'));
      rows.push(row);
    }
  }
  return rows;
}

const realTable = (rows: readonly RealRow[]): string =>
  table(
    COLUMNS.map(([h]) => h),
    rows.map((r) => COLUMNS.map(([, cell]) => cell(r))),
  );

/** BENCH_BILLING_PRESETS: a comma-separated subset of the presets (default all). */
export function chosenPresets(): string[] {
  const v = process.env.BENCH_BILLING_PRESETS;
  if (!v) return PRESET_NAMES;
  const chosen = v.split(',').map((p) => p.trim());
  const unknown = chosen.filter((p) => !PRESET_NAMES.includes(p));
  if (unknown.length) throw new Error(`BENCH_BILLING_PRESETS: unknown preset(s) ${unknown.join(', ')}; known: ${PRESET_NAMES.join(', ')}`);
  return chosen;
}

/**
 * When to offload, measured: `agent` as the seed defines its mask (by age alone, behind
 * keep_recent: 3 newer outputs) beside the preset, which also offloads a large output once read.
 */
const TIMING_VARIANTS: readonly Variant[] = [
  { name: 'agent, mask by age only', config: 'preset: agent\ncomponents:\n  mask: { read_min_tokens: 0 }\n' },
];

export async function runRealBilling(): Promise<string> {
  const sessions = realSessions();
  const presets = chosenPresets().map((p): Variant => ({ name: p, preset: p }));
  const rows = await replayRows(process.env.BENCH_BILLING_PRESETS ? presets : [...presets, ...TIMING_VARIANTS], sessions);
  const turns = sessions.reduce((n, s) => n + s.turns, 0);
  const dearer = rows.filter((r) => r.dearer).map((r) => `- ${r.variant} ${r.dialect}: ${r.dearerSessions.join(', ')}`);
  const dearerText = dearer.length ? `\n\nSessions billed above bypass:\n${dearer.join('\n')}` : '\n\nNo session is billed above bypass.';
  return `${sessions.length} real sessions (bench/corpus-real/index.json), ${turns} turns per row; a turn every 30 s.\n\n${realTable(rows)}${dearerText}`;
}
