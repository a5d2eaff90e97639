// Many agent sessions through the real gateway (HTTP, the tenant's config with a holdout) against a
// fake provider with a simulated prompt cache (test/support/prompt-cache.ts), each session under its
// own credential so each has its own cache, as in the billing replay. The gateway measures treated
// against holdout sessions from the usage the provider reported; the billing replay
// (bench/billing-replay.ts) bills the same sessions with and without the gateway. The measured
// interval should contain the simulated saving of the whole traffic. Shared by `npm run bench --
// holdout` and its bounded test (test/e2e/holdout-replay.test.ts).
import type { Dialect } from '@context-guru/components';
import type { SavingsEstimate } from '@context-guru/storage';
import { armPoint, sessionHash } from '@context-guru/engine';
import { startFakeUpstream } from '../test/support/fake-upstream';
import { startGateway } from '../test/support/gateway-harness';
import { PromptCacheSim, cachingScript } from '../test/support/prompt-cache';
import { anthropicJson, openaiJson } from '../test/support/scripted-model';
import { generatedSession } from './billing.bench';
import { replaySession, type SessionSpec } from './billing-replay';

/** Output tokens of every answer, the same in both bills (the answer's text does not matter here). */
const OUTPUT_TOKENS = 40;
/** The simulator's prices (PRICE in prompt-cache.ts) as the gateway's price table: both bill alike. */
const SIM_PRICES =
  'families:\n  - { family: sim, match: [claude-fake, gpt-fake], input: 3, cache_write: 3.75, cache_read: 0.3, output: 15 }\n';

export interface HoldoutReplayOptions {
  dialect: Dialect;
  preset: string;
  fraction: number;
  specs: SessionSpec[];
  /** Sessions in flight at once (each session's turns stay in order). */
  concurrency?: number;
}

interface ArmBill {
  sessions: number;
  /** What the gateway measured from the provider's usage. */
  measuredUsd: number;
  /** What the billing replay bills the same sessions: with the gateway (treated) or without (holdout). */
  simulatedUsd: number;
}

export interface HoldoutReplay {
  turns: number;
  /** The `holdout` block of the tenant's /stats. */
  measured: SavingsEstimate & { fraction: number; version: number };
  /** 1 − billed with / billed without the gateway over every session, from the billing replay. */
  simulatedSavingPct: number;
  contains: boolean;
  arms: { treated: ArmBill; holdout: ArmBill };
  /** Largest relative gap between a session's measured bill and its simulated one. */
  maxSessionGap: number;
  seconds: number;
}

/** `n` generated agent sessions of 6 to `maxTurns` turns (lengths spread evenly), distinct content each. */
export function replaySessions(n: number, maxTurns = 30, firstSeed = 100): SessionSpec[] {
  return Array.from({ length: n }, (_, i) => {
    const spec = generatedSession(firstSeed + i, 6 + ((i * 7) % (maxTurns - 5)));
    return { ...spec, output: () => OUTPUT_TOKENS };
  });
}

const sessionId = (i: number) => `replay-${i}`;

/** The arm the default tenant's session `i` falls in at `fraction` (the gateway's own rule). */
export function replayArm(i: number, fraction: number): 'treated' | 'holdout' {
  return armPoint('default', `default:${sessionId(i)}`) < fraction ? 'holdout' : 'treated';
}

export async function runHoldoutReplay(o: HoldoutReplayOptions): Promise<HoldoutReplay> {
  const started = performance.now();
  const sim = new PromptCacheSim();
  const reply = o.dialect === 'anthropic' ? anthropicJson('Done.') : openaiJson('Done.');
  const billed: unknown[] = [];
  const upstream = await startFakeUpstream(cachingScript(sim, () => reply, billed as never[], OUTPUT_TOKENS));
  const config = `preset: ${o.preset}\nholdout: { fraction: ${o.fraction} }\n`;
  const gateway = await startGateway(upstream.url, { CONFIG: config, PRICE_TABLE: SIM_PRICES });
  const path = o.dialect === 'anthropic' ? '/anthropic/v1/messages' : '/openai/v1/chat/completions';
  let turns = 0;
  try {
    const queue = o.specs.map((spec, i) => ({ spec, i }));
    const worker = async () => {
      for (let job = queue.shift(); job; job = queue.shift()) {
        const cred: Record<string, string> =
          o.dialect === 'anthropic' ? { 'x-api-key': `sk-${sessionId(job.i)}` } : { authorization: `Bearer sk-${sessionId(job.i)}` };
        for (let t = 1; t <= job.spec.turns; t++) {
          const res = await fetch(`${gateway.url}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-context-guru-session': sessionId(job.i), ...cred },
            body: JSON.stringify(job.spec.body(o.dialect, t)),
          });
          if (res.status !== 200) throw new Error(`session ${job.i} turn ${t}: ${res.status} ${await res.text()}`);
          await res.text();
          // Nothing reads the recorded bodies here: let them go (a long run would hold every one).
          upstream.requests.length = 0;
          billed.length = 0;
          turns++;
        }
      }
    };
    await Promise.all(Array.from({ length: o.concurrency ?? 2 }, worker));
    const stats = (await (await fetch(`${gateway.url}/stats`)).json()) as { holdout: HoldoutReplay['measured'] };
    const rows = new Map((await gateway.gw.holdout.ledger.list('default')).map((r) => [r.session, r]));
    // The same sessions billed by the billing replay, with and without the gateway (no holdout there).
    const arms = { treated: zeroArm(), holdout: zeroArm() };
    let withUsd = 0;
    let withoutUsd = 0;
    let maxSessionGap = 0;
    // The replay mints the gateway's (keyed) marker ids for its default tenant: ids are billed bytes.
    const keys = gateway.gw.keys;
    const ids = keys && { idsFor: () => keys.idsFor('default') };
    // Holdout rows are keyed by the session's keyed name (cg.session_hash), as the gateway writes them.
    const names = keys && (await keys.namesFor('default'));
    const hashOf = (session: string) => (names ? names.name('trace', session) : sessionHash(session));
    for (const [i, spec] of o.specs.entries()) {
      const bill = await replaySession({ name: o.preset, preset: o.preset, ...(ids && { ids }) }, o.dialect, spec, 'steady');
      withUsd += bill.with.usd;
      withoutUsd += bill.without.usd;
      const arm = replayArm(i, o.fraction);
      const simulated = arm === 'treated' ? bill.with.usd : bill.without.usd;
      const measured = rows.get(hashOf(`default:${sessionId(i)}`))?.billedUsd ?? 0;
      arms[arm].sessions++;
      arms[arm].measuredUsd += measured;
      arms[arm].simulatedUsd += simulated;
      maxSessionGap = Math.max(maxSessionGap, Math.abs(measured - simulated) / simulated);
    }
    const simulatedSavingPct = Math.round((1 - withUsd / withoutUsd) * 10_000) / 100;
    const m = stats.holdout;
    const contains =
      m.interval_low_pct !== null &&
      m.interval_high_pct !== null &&
      m.interval_low_pct <= simulatedSavingPct &&
      simulatedSavingPct <= m.interval_high_pct;
    return { turns, measured: m, simulatedSavingPct, contains, arms, maxSessionGap, seconds: (performance.now() - started) / 1000 };
  } finally {
    await gateway.close();
    await upstream.close();
  }
}

const zeroArm = (): ArmBill => ({ sessions: 0, measuredUsd: 0, simulatedUsd: 0 });
