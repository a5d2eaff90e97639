// The repeated-turn memo is a pure speed-up: through repeats, new turns, config changes, a Redis
// flush, a cold cache and another replica's writes, every forwarded body and every figure the
// request reports must be what the full path (memo disabled) produces on the same sequence. Two
// gateways side by side, each on its own Redis key prefix, fed the same turns at the same clock.
import { contentKey, type PipelineDocument } from '@context-guru/components';
import { RedisHotStore } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { createLogger } from '../../../apps/gateway/src/observability/logger';
import type { RequestReport } from '../../../apps/gateway/src/observability/request-report';
import { prepareRequest, type PrepareDeps } from '../../../apps/gateway/src/proxy/prepare-request';
import { RepeatMemo } from '../../../apps/gateway/src/proxy/prepare/repeat-memo';
import { LearnedKeys } from '../../../apps/gateway/src/session/session-run';
import { createTenantRuntime, type TenantRuntime } from '../../../apps/gateway/src/tenancy/tenant-runtime';
import { TurnCache } from '../../../apps/gateway/src/wire/turn-cache';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';
import { REDIS_URL, flushPrefix, uniquePrefix } from '../storage/redis-support';

const admin = new Redis(REDIS_URL);
const open: Array<{ store: RedisHotStore; prefix: string }> = [];

afterAll(async () => {
  for (const o of open) {
    await o.store.close();
    await flushPrefix(admin, o.prefix);
  }
  await admin.quit();
});

type Dialect = 'openai' | 'anthropic';

interface Gateway {
  deps: PrepareDeps;
  store: RedisHotStore;
  prefix: string;
}

async function gateway(clock: { now: () => number }, repeats?: RepeatMemo): Promise<Gateway> {
  const prefix = uniquePrefix();
  const store = await RedisHotStore.connect({ url: REDIS_URL, prefix });
  open.push({ store, prefix });
  const deps: PrepareDeps = {
    store,
    turns: new TurnCache(),
    repeats,
    clock,
    log: createLogger('error', () => undefined),
    injectMode: 'auto',
    learned: new LearnedKeys(),
  };
  return { deps, store, prefix };
}

/** What /stats, /metrics and the ledgers take from a prepared request, durations aside. */
function figures(r: RequestReport) {
  return {
    session: r.session,
    enforced: r.enforced,
    failOpen: r.failOpen,
    tokens: [r.tokensBefore, r.tokensAfter, r.attemptedTokens],
    saved: r.saved,
    frozen: [r.frozenHits, r.frozenMisses],
    guardReverted: r.guardReverted,
    compactionReset: r.compactionReset,
    discarded: [...r.discarded],
    arm: r.arm,
    measured: r.measured,
    components: r.reports.map((c) => [c.component, c.tokensBefore, c.tokensAfter, c.changed, c.keys, c.skipped, c.reverted, c.gates]),
  };
}

/** One step of the script: a turn of the transcript (repeated `times`), or something happening between turns. */
type Step =
  | { turn: number; times?: number }
  // The turn with one character of its last tool output changed: same size, other bytes.
  | { variant: number }
  | { config: PipelineDocument }
  | { flush: true }
  | { idleMs: number }
  | { keep: number }
  | { bypass: number };

const COLD_CACHE: PipelineDocument = {
  pipeline: ['format', 'dedup', 'collapse', 'mask'],
  components: { mask: { cold_cache: true }, collapse: { cold_cache: true } },
};

const SCRIPT: Step[] = [
  { turn: 4, times: 4 },
  { turn: 5, times: 3 },
  { variant: 5 },
  { turn: 5, times: 2 },
  { bypass: 5 },
  { turn: 5, times: 2 },
  { turn: 7, times: 3 },
  // A config change mid-session: the new version must replay what the old one forwarded.
  { config: { preset: 'balanced' } },
  { turn: 7, times: 3 },
  { turn: 8, times: 2 },
  { config: COLD_CACHE },
  { turn: 8, times: 2 },
  // Past every TTL: the turn reads cold and cold_cache components may rewrite the whole prefix.
  { idleMs: 3 * 60 * 60_000 },
  { turn: 8, times: 3 },
  { turn: 9, times: 2 },
  // Another replica's expand marks an output kept verbatim (tenant-wide).
  { keep: 2 },
  { turn: 9, times: 2 },
  // Redis loses everything: the next turn is a first turn again.
  { flush: true },
  { turn: 9, times: 3 },
  { config: { preset: 'agent' } },
  { turn: 10, times: 3 },
  { turn: 6, times: 2 },
  { turn: 11, times: 3 },
];

async function replay(dialect: Dialect): Promise<{ turns: number; hits: number; misses: number }> {
  let now = 1_800_000_000_000;
  const clock = { now: () => now };
  const memo = new RepeatMemo();
  const fast = await gateway(clock, memo);
  const full = await gateway(clock);
  const steps = agentSteps(12, dialect === 'openai' ? 5 : 6);
  let tenant: TenantRuntime = createTenantRuntime('t', { preset: 'agent' }, 1);
  let version = 1;
  let turns = 0;
  const body = (t: number, from = steps) => JSON.stringify(dialect === 'openai' ? openaiTurn(from, t) : anthropicTurn(from, t));
  /** Turn t with the first `e` of its last tool output turned into an `f`: as many bytes, not the same ones. */
  const variant = (t: number) => {
    const last = steps[t - 1]!;
    const changed = body(
      t,
      steps.map((s) => (s === last ? { ...s, output: s.output.replace('e', 'f') } : s)),
    );
    expect([changed.length, changed === body(t)]).toEqual([body(t).length, false]);
    return changed;
  };
  const send = async (t: number, bypassHeader = false, text = body(t)) => {
    const input = {
      route: dialect,
      dialect,
      raw: text,
      tenant,
      pipeline: tenant.built.pipeline,
      cacheMode: 'auto' as const,
      sessionHeader: 'replayed',
      bypassHeader,
      shed: false,
    };
    // The fast gateway gets the body as the chat route does: bytes, decoded only when not recognised.
    const bytes = Buffer.from(text);
    const fastInput = { ...input, bytes, raw: memo.textOf(input, bytes) ?? bytes.toString('utf8') };
    const [a, b] = [await prepareRequest(fast.deps, fastInput), await prepareRequest(full.deps, input)];
    turns++;
    expect({ turn: t, outgoing: a.outgoing, advertised: a.advertised }).toEqual({
      turn: t,
      outgoing: b.outgoing,
      advertised: b.advertised,
    });
    // Bytes handed over ready-encoded are the forwarded text's.
    if (a.encoded) expect(Buffer.concat([a.encoded].flat()).equals(Buffer.from(a.outgoing))).toBe(true);
    expect(figures(a.report)).toEqual(figures(b.report));
    now += 20_000;
  };
  for (const step of SCRIPT) {
    if ('turn' in step) for (let i = 0; i < (step.times ?? 1); i++) await send(step.turn);
    else if ('variant' in step) await send(step.variant, false, variant(step.variant));
    else if ('bypass' in step) await send(step.bypass, true);
    else if ('config' in step) tenant = createTenantRuntime('t', step.config, ++version, true);
    else if ('idleMs' in step) now += step.idleMs;
    else if ('flush' in step) await Promise.all([flushPrefix(admin, fast.prefix), flushPrefix(admin, full.prefix)]);
    else {
      const key = contentKey(steps[step.keep]!.output);
      await Promise.all([fast.store.markKept('t', [key]), full.store.markKept('t', [key])]);
    }
  }
  return { turns, hits: memo.hits, misses: memo.misses };
}

describe('the repeated-turn memo', () => {
  for (const dialect of ['openai', 'anthropic'] as const) {
    it(`${dialect}: forwards exactly what the full path forwards, through repeats, config changes, a flush and a cold cache`, async () => {
      const r = await replay(dialect);
      // Most repeats are served from the memo; the turns after each change of the store are not.
      expect(r.hits).toBeGreaterThanOrEqual(12);
      expect(r.misses).toBeGreaterThan(0);
    });
  }
});
