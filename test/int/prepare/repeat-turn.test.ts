// The repeated-turn memo is a pure speed-up: through repeats, new turns, config changes, a Redis
// flush, a cold cache and another replica's writes, every forwarded body and every figure the
// request reports must be what the full path (memo disabled) produces on the same sequence. Two
// gateways side by side, each on its own Redis key prefix (or its own in-process store, whose
// session stamps let a repeat within a second skip the load), fed the same turns at the same clock.
import { contentKey, type PipelineDocument } from '@context-guru/components';
import { MemoryHotStore, RedisHotStore } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { createLogger } from '../../../libs/engine/src/logger';
import type { RequestReport } from '../../../libs/engine/src/report/request-report';
import { prepareRequest, type PrepareDeps } from '../../../libs/engine/src/prepare-request';
import { RepeatMemo } from '../../../libs/engine/src/prepare/repeat-memo';
import { LearnedKeys } from '../../../libs/engine/src/session/session-run';
import { createTenantRuntime, type TenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { TurnCache } from '../../../libs/engine/src/wire/turn-cache';
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

type StoreKind = 'redis' | 'memory';

interface Gateway {
  deps: PrepareDeps;
  store: RedisHotStore | MemoryHotStore;
  /** Loses everything the store holds (FLUSHDB for Redis, a restart for the in-process store). */
  flush: () => Promise<void>;
  /** Session loads the store answered. */
  loads: () => number;
  /** Every original put, by id, and how many putStash calls there were. */
  stashed: () => { ids: Set<string>; calls: number };
}

async function hotStore(kind: StoreKind, clock: { now: () => number }): Promise<Pick<Gateway, 'store' | 'flush'>> {
  if (kind === 'memory') {
    const store = new MemoryHotStore({ now: clock.now });
    return { store, flush: () => store.close() };
  }
  const prefix = uniquePrefix();
  const store = await RedisHotStore.connect({ url: REDIS_URL, prefix });
  open.push({ store, prefix });
  return { store, flush: () => flushPrefix(admin, prefix) };
}

async function gateway(kind: StoreKind, clock: { now: () => number }, repeats?: RepeatMemo): Promise<Gateway> {
  const { store, flush } = await hotStore(kind, clock);
  let loads = 0;
  const load = store.loadSession.bind(store);
  store.loadSession = (...args) => {
    loads++;
    return load(...args);
  };
  const stashed = { ids: new Set<string>(), calls: 0 };
  const put = store.putStash.bind(store);
  store.putStash = (tenant, session, entries) => {
    stashed.calls++;
    for (const e of entries) stashed.ids.add(e.id);
    return put(tenant, session, entries);
  };
  const deps: PrepareDeps = {
    store,
    turns: new TurnCache(),
    repeats,
    clock,
    log: createLogger('error', () => undefined),
    injectMode: 'auto',
    learned: new LearnedKeys(),
  };
  return { deps, store, flush, loads: () => loads, stashed: () => stashed };
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
  // `gapMs`: the clock's advance after each (20 s unless given).
  | { turn: number; times?: number; gapMs?: number }
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
  // Repeats a few hundred milliseconds apart: the in-process store's stamp vouches for the last load.
  { turn: 4, times: 4, gapMs: 300 },
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
  { turn: 9, times: 3, gapMs: 200 },
  // Another replica's expand marks an output kept verbatim (tenant-wide).
  { keep: 2 },
  { turn: 9, times: 2, gapMs: 200 },
  // Redis loses everything: the next turn is a first turn again.
  { flush: true },
  { turn: 9, times: 3 },
  { turn: 9, times: 2, gapMs: 100 },
  { config: { preset: 'agent' } },
  { turn: 10, times: 3, gapMs: 250 },
  { turn: 6, times: 2 },
  { turn: 11, times: 3 },
];

async function replay(
  dialect: Dialect,
  kind: StoreKind,
): Promise<{ turns: number; hits: number; misses: number; loads: number[]; puts: number[] }> {
  let now = 1_800_000_000_000;
  const clock = { now: () => now };
  const memo = new RepeatMemo();
  const fast = await gateway(kind, clock, memo);
  const full = await gateway(kind, clock);
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
  const send = async (t: number, bypassHeader = false, text = body(t), gapMs = 20_000) => {
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
    now += gapMs;
  };
  for (const step of SCRIPT) {
    if ('turn' in step) for (let i = 0; i < (step.times ?? 1); i++) await send(step.turn, false, body(step.turn), step.gapMs);
    else if ('variant' in step) await send(step.variant, false, variant(step.variant));
    else if ('bypass' in step) await send(step.bypass, true);
    else if ('config' in step) tenant = createTenantRuntime('t', step.config, ++version, true);
    else if ('idleMs' in step) now += step.idleMs;
    else if ('flush' in step) await Promise.all([fast.flush(), full.flush()]);
    else {
      const key = contentKey(steps[step.keep]!.output);
      await Promise.all([fast.store.markKept('t', [key]), full.store.markKept('t', [key])]);
    }
  }
  // Every original the full path holds, the fast one holds too: no replay left a marker unresolvable.
  for (const id of full.stashed().ids)
    expect({ id, text: await fast.store.getStash('t', id) }).toEqual({ id, text: await full.store.getStash('t', id) });
  return {
    turns,
    hits: memo.hits,
    misses: memo.misses,
    loads: [fast.loads(), full.loads()],
    puts: [fast.stashed().calls, full.stashed().calls],
  };
}

describe('the repeated-turn memo', () => {
  for (const kind of ['redis', 'memory'] as const) {
    for (const dialect of ['openai', 'anthropic'] as const) {
      it(`${dialect} on ${kind}: forwards exactly what the full path forwards, through repeats, config changes, a flush and a cold cache`, async () => {
        const r = await replay(dialect, kind);
        // Most repeats are served from the memo; the turns after each change of the store are not.
        expect(r.hits).toBeGreaterThanOrEqual(12);
        expect(r.misses).toBeGreaterThan(0);
        const [fastLoads, fullLoads] = r.loads;
        // Redis cannot vouch for a load: every turn reads the session. The in-process store's
        // stamp lets repeats within a second skip it, and only those.
        if (kind === 'redis') expect(fastLoads).toBe(fullLoads);
        else {
          expect(fullLoads! - fastLoads!).toBeGreaterThanOrEqual(6);
          // Repeats re-put originals at most once a second (the full path, through putStash, on every turn;
          // on Redis it writes them inside its guarded commit instead, so the calls do not compare).
          const [fastPuts, fullPuts] = r.puts;
          expect(fullPuts! - fastPuts!).toBeGreaterThanOrEqual(6);
        }
      });
    }
  }
});
