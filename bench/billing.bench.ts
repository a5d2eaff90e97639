// Simulated billed cost with vs without the gateway on the project's corpus: generated agent
// sessions (test/support/transcripts.ts, several seeds, both dialects, 40–60 turns) replayed turn
// by turn through the real request path (prepareRequest, memory store, a test clock) and billed by
// the prompt-cache simulator (test/support/prompt-cache.ts: cache reads, writes, fresh input and
// output at Anthropic-style prices). "Without" bills the client's own bodies; "with" bills what the
// gateway forwards. A cache bust is a turn whose forwarded message prefix changed while the
// provider still held the previous one; it must be 0 for every preset.
import { MemoryHotStore } from '@context-guru/storage';
import { countTokens } from '@context-guru/components';
import { prepareRequest } from '../apps/gateway/src/proxy/prepare-request';
import { createLogger } from '../apps/gateway/src/observability/logger';
import { StatsRollup } from '../apps/gateway/src/observability/stats';
import { createTenantRuntime, loadConfigDocument } from '../apps/gateway/src/tenancy/tenant-runtime';
import { FIVE_MINUTES, PromptCacheSim, headChanged, prefixBust, type Bill, type CacheDialect } from '../test/support/prompt-cache';
import { agentSteps, anthropicTurn, openaiTurn, type AgentStep } from '../test/support/transcripts';
import { table } from './bench-util';

type Json = Record<string, unknown>;

interface Variant {
  name: string;
  preset?: string;
  config?: string;
}

const VARIANTS: Variant[] = [
  { name: 'off', preset: 'off' },
  { name: 'balanced', preset: 'balanced' },
  { name: 'agent', preset: 'agent' },
  { name: '[format,dedup,collapse,mask]', config: 'pipeline: [format, dedup, collapse, mask]' },
  { name: '[format,dedup,collapse,mask] cold_cache', config: 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { cold_cache: true }\n  collapse: { cold_cache: true }' },
];
/** (seed, turns): several sessions of 40–60 turns. */
const SESSIONS: ReadonlyArray<readonly [number, number]> = [
  [3, 60],
  [7, 50],
  [11, 40],
];
const STEP_MS = 30_000;
/** One pause mid-session, past the 5-min provider TTL (+60 s): the gateway may read it as cold. */
const PAUSE_MS = 12 * 60_000;
const SCHEDULES = ['steady', 'pause'] as const;
type Schedule = (typeof SCHEDULES)[number];

/** The client as Claude Code behaves: breakpoints on the system prompt and on its newest block. */
function anthropicClientBody(steps: AgentStep[], t: number): Json {
  const body = anthropicTurn(steps, t) as Json;
  body.system = [{ type: 'text', text: body.system as string, cache_control: { type: 'ephemeral' } }];
  const messages = body.messages as Array<{ content: unknown }>;
  const last = messages[messages.length - 1]!;
  if (Array.isArray(last.content)) {
    const blocks = last.content as Json[];
    blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: { type: 'ephemeral' } };
  } else {
    last.content = [{ type: 'text', text: last.content, cache_control: { type: 'ephemeral' } }];
  }
  return body;
}

interface Totals {
  without: Bill;
  with: Bill;
  busts: number;
  toolsChanges: number;
  /** Sessions billed more with the gateway than without (the money target says: none). */
  worse: number;
  stats: StatsRollup;
}

const zero = (): Bill => ({ prompt: 0, fresh: 0, cacheRead: 0, cacheWrite: 0, output: 0, usd: 0 });
function add(a: Bill, b: Bill): void {
  for (const k of Object.keys(a) as Array<keyof Bill>) a[k] += b[k];
}

async function replay(v: Variant, dialect: CacheDialect, seed: number, turns: number, schedule: Schedule, into: Totals): Promise<void> {
  let now = 1_700_000_000_000;
  const clock = { now: () => now };
  const store = new MemoryHotStore({ now: clock.now, maxEntries: 200_000 });
  const tenant = createTenantRuntime('bench', loadConfigDocument(v.preset, v.config), 1);
  const deps = { store, clock, log: createLogger('error', () => undefined), injectMode: 'auto' as const };
  const simWithout = new PromptCacheSim({ now: clock.now });
  const simWith = new PromptCacheSim({ now: clock.now });
  const steps = agentSteps(turns, seed);
  const session = `bill-${v.name}-${dialect}-${seed}-${schedule}`;
  let prev: Json | undefined;
  let prevAt = now;
  const spent = { with: 0, without: 0 };
  for (let t = 1; t <= turns; t++) {
    now += schedule === 'pause' && t === Math.floor(turns / 2) ? PAUSE_MS : STEP_MS;
    const body = dialect === 'anthropic' ? anthropicClientBody(steps, t) : (openaiTurn(steps, t) as Json);
    const raw = JSON.stringify(body);
    const p = await prepareRequest(deps, { route: dialect, dialect, raw, tenant, pipeline: tenant.built.pipeline, cacheMode: 'auto', sessionHeader: session, bypassHeader: false });
    into.stats.record(p.report);
    const out = JSON.parse(p.outgoing) as Json;
    // The model's answer is the next tool call: identical with and without the gateway.
    const next = steps[t];
    const output = next ? countTokens(JSON.stringify({ name: next.tool, input: next.args })) : 40;
    const billWithout = simWithout.bill(session, dialect, body, output);
    const billWith = simWith.bill(session, dialect, out, output);
    add(into.without, billWithout);
    add(into.with, billWith);
    spent.without += billWithout.usd;
    spent.with += billWith.usd;
    if (prev) {
      const cacheAlive = now - prevAt < FIVE_MINUTES;
      if (cacheAlive && prefixBust(prev, out) >= 0) into.busts++;
      if (headChanged(dialect, prev, out)) into.toolsChanges++;
    }
    prev = out;
    prevAt = now;
  }
  if (spent.with > spent.without + 1e-9) into.worse++;
  await store.close();
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

export async function runBilling(): Promise<string> {
  const rows: string[][] = [];
  for (const v of VARIANTS) {
    for (const dialect of ['anthropic', 'openai'] as const) {
      for (const schedule of SCHEDULES) {
        const totals: Totals = { without: zero(), with: zero(), busts: 0, toolsChanges: 0, worse: 0, stats: new StatsRollup() };
        for (const [seed, turns] of SESSIONS) await replay(v, dialect, seed, turns, schedule, totals);
        const saved = savedTokens(totals.stats);
        const w = totals.with;
        const wo = totals.without;
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
          `${totals.worse}/${SESSIONS.length}`,
          String(totals.busts),
          String(totals.toolsChanges),
        ]);
      }
    }
  }
  const header = ['pipeline', 'dialect', 'schedule', 'input tok without', 'input tok with', 'Δ tokens', 'content saved cumul. / unique', 'cache-read share (with)', 'billed without', 'billed with', 'Δ billed', 'sessions billed more', 'busts', 'tools changes'];
  const sessions = SESSIONS.map(([seed, turns]) => `seed ${seed} × ${turns} turns`).join(', ');
  return `Sessions per row: ${sessions}; a turn every ${STEP_MS / 1000} s; "pause" adds one ${PAUSE_MS / 60_000}-min idle gap mid-session.\n\n${table(header, rows)}`;
}
