// One session replayed turn by turn through the gateway's real request path (prepareRequest,
// memory store, a test clock) and billed twice by the prompt-cache simulator: the client's own
// bodies ("without") and what the gateway forwards ("with"). A bust is a turn that changed what
// the provider still held from the previous turn — a message prefix or the tools/system head.
// Shared by the billing benchmark and the test-tier replay gate.
import type { Dialect, MarkerIdSource } from '@context-guru/components';
import { MemoryHotStore } from '@context-guru/storage';
import {
  prepareRequest,
  createLogger,
  createTenantRuntime,
  loadConfigDocument,
  DEFAULT_PAYBACK_TURNS,
  createPriceTable,
} from '@context-guru/engine';
import type { StatsRollup } from '@context-guru/engine';
import { FidelityCheck, type Fidelity } from './fidelity-check';
import { FIVE_MINUTES, PromptCacheSim, SIMULATED_PRICES, headChanged, prefixBust, type Bill } from '../test/support/prompt-cache';

type Json = Record<string, unknown>;

export interface Variant {
  name: string;
  preset?: string;
  config?: string;
  /** REWRITE_PAYBACK_TURNS for this variant (default the gateway's; 0: the blanket tail gate). */
  paybackTurns?: number;
  /** INJECT_EXPAND for this variant (default auto). */
  injectMode?: 'auto' | 'never';
  /** The marker ids of the gateway this replay stands for (default: unkeyed): ids are part of the billed bytes. */
  ids?: MarkerIdSource;
}

export interface SessionSpec {
  name: string;
  turns: number;
  /** The client's request after t turns (1-based). */
  body: (dialect: Dialect, t: number) => Json;
  /** Output tokens of the model's answer on turn t (identical with and without the gateway). */
  output: (t: number) => number;
  /** Facts a later turn relies on (real sessions): each must stay visible or one expand away. */
  needles?: readonly string[];
}

export const STEP_MS = 30_000;
/** One pause mid-session, past the 5-min provider TTL (+60 s): the gateway may read it as cold. */
export const PAUSE_MS = 12 * 60_000;
export const SCHEDULES = ['steady', 'pause'] as const;
export type Schedule = (typeof SCHEDULES)[number];

export interface SessionBill {
  without: Bill;
  with: Bill;
  /** Turns whose forwarded message prefix changed while the provider still held it. */
  prefixBusts: number;
  /** Turns whose tools/system head changed while the provider still held it. */
  headBusts: number;
  /** Needles kept, markers exact (bench/fidelity-check.ts). */
  fidelity: Fidelity;
  /** Rewrites the gateway made on purpose (priced, counted apart from busts); absent: none counted. */
  planned?: PlannedRewrites;
}

interface PlannedRewrites {
  rewrites: number;
  /** What the rewrites cost when made (the suffix re-billed as a cache write instead of a read). */
  costUsd: number;
  /** What they saved on the later turns. */
  savedUsd: number;
}

export const zeroBill = (): Bill => ({ prompt: 0, fresh: 0, cacheRead: 0, cacheWrite: 0, output: 0, usd: 0 });
export function addBill(a: Bill, b: Bill): void {
  for (const k of Object.keys(a) as Array<keyof Bill>) a[k] += b[k];
}

export async function replaySession(
  v: Variant,
  dialect: Dialect,
  spec: SessionSpec,
  schedule: Schedule,
  stats?: StatsRollup,
): Promise<SessionBill> {
  let now = 1_700_000_000_000;
  const clock = { now: () => now };
  const store = new MemoryHotStore({ now: clock.now, maxEntries: 200_000 });
  const tenant = createTenantRuntime('bench', loadConfigDocument(v.preset, v.config), 1);
  // The tenant's price table is the simulator's, so the gateway prices rewrites as it is billed.
  const rewrites = { paybackTurns: v.paybackTurns ?? DEFAULT_PAYBACK_TURNS, prices: createPriceTable([SIMULATED_PRICES]) };
  const deps = {
    store,
    ...(v.ids && { ids: v.ids }),
    clock,
    log: createLogger('error', () => undefined),
    injectMode: v.injectMode ?? 'auto',
    rewrites,
  };
  const simWithout = new PromptCacheSim({ now: clock.now });
  const simWith = new PromptCacheSim({ now: clock.now });
  const session = `bill-${v.name}-${dialect}-${spec.name}-${schedule}`;
  const fidelity = new FidelityCheck(dialect, spec.needles ?? [], (id) => store.getStash(tenant.id, id));
  const planned = { rewrites: 0, costUsd: 0, savedUsd: 0 };
  const out: Omit<SessionBill, 'fidelity'> = { without: zeroBill(), with: zeroBill(), prefixBusts: 0, headBusts: 0, planned };
  let prev: Json | undefined;
  let prevAt = now;
  try {
    for (let t = 1; t <= spec.turns; t++) {
      now += schedule === 'pause' && t === Math.floor(spec.turns / 2) ? PAUSE_MS : STEP_MS;
      const body = spec.body(dialect, t);
      const raw = JSON.stringify(body);
      const p = await prepareRequest(deps, {
        route: dialect,
        dialect,
        raw,
        tenant,
        pipeline: tenant.built.pipeline,
        cacheMode: 'auto',
        sessionHeader: session,
        bypassHeader: false,
      });
      stats?.record(p.report);
      const sent = JSON.parse(p.outgoing) as Json;
      await fidelity.turn(body, sent);
      const output = spec.output(t);
      addBill(out.without, simWithout.bill(session, dialect, body, output));
      addBill(out.with, simWith.bill(session, dialect, sent, output));
      const plan = p.report.planned;
      if (plan) {
        planned.rewrites++;
        planned.costUsd += plan.costUsd;
        // Saved on the turns the session still had after it (the replay knows how many came).
        planned.savedUsd += plan.savingUsdPerTurn * (spec.turns - t);
      }
      if (prev && now - prevAt < FIVE_MINUTES) {
        const bust = prefixBust(prev, sent);
        // A priced rewrite changes the prefix from the message it announces, never before it.
        if (bust >= 0 && !(plan && bust === plan.from)) out.prefixBusts++;
        if (headChanged(dialect, prev, sent)) out.headBusts++;
      }
      prev = sent;
      prevAt = now;
    }
  } finally {
    await store.close();
  }
  return { ...out, fidelity: fidelity.result() };
}
