// A warm turn costs at most two Redis round trips — the turn advance beside the session load, then
// every write together — even on turns that bring new content a Reformat (`format`) rewrites,
// whose content key is only known once the pipeline ran. Counted by the store (a burst of commands
// issued before any reply is awaited is one round trip), never timed. The forwarded bytes stay those
// of the same session on the in-memory store, also when two replicas alternate (the second never
// learned the rewritten keys, so the write finds the first's decisions and the turn is re-run) and
// when Redis loses everything mid-session.
import { type HotStore, type PipelineDocument } from '@context-guru/components';
import { createStores, MemoryHotStore, RedisHotStore, TieredHotStore } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { prepareRequest, type PrepareDeps } from '../../../libs/engine/src/prepare-request';
import { LearnedKeys } from '../../../libs/engine/src/session/session-run';
import { createTenantRuntime, type TenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { prepareDeps } from '../../support/prepare-deps';
import { agentSteps, anthropicTurn, type AgentStep } from '../../support/transcripts';
import { flushPrefix, REDIS_URL, uniquePrefix } from './redis-support';

jest.setTimeout(120_000);

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TURNS = 24;
const steps = agentSteps(TURNS, 9);
const bodies = Array.from({ length: TURNS }, (_, t) => JSON.stringify(anthropicTurn(steps, t + 1)));

/** Pretty-printed JSON API answers only: `format` compacts every one, so every decision is on rewritten text. */
const issues = (i: number) =>
  JSON.stringify(
    Array.from({ length: 10 + i }, (_, k) => ({
      id: 1000 * i + k,
      title: `Issue ${k}: timeout in auth handler`,
      state: k % 3 ? 'open' : 'closed',
    })),
    null,
    2,
  );
const jsonSteps: AgentStep[] = Array.from({ length: TURNS + 2 }, (_, i) => ({
  id: `call_json_${i}`,
  tool: 'http_get',
  args: { url: `https://api.example.test/issues?page=${i}` },
  output: issues(i),
}));
/** Opens with three answers, so the cold first turn masks the older two and freezes those decisions. */
const jsonBodies = Array.from({ length: TURNS }, (_, t) => JSON.stringify(anthropicTurn(jsonSteps, t + 3)));

interface Replica {
  deps: PrepareDeps;
  learned: LearnedKeys;
}

function replica(store: HotStore): Replica {
  const learned = new LearnedKeys();
  return { deps: prepareDeps(store, learned), learned };
}

async function send(r: Replica, tenant: TenantRuntime, raw: string): Promise<{ outgoing: string; session: string }> {
  const p = await prepareRequest(r.deps, {
    route: 'anthropic',
    dialect: 'anthropic',
    raw,
    tenant,
    pipeline: tenant.built.pipeline,
    cacheMode: 'auto',
    sessionHeader: 'sess',
    bypassHeader: false,
  });
  if (p.report.failOpen) throw new Error(`failed open: ${p.report.failOpen}`);
  return p;
}

interface Scenario {
  doc: PipelineDocument;
  bodies: string[];
}
const AGENT: Scenario = { doc: { preset: 'agent' }, bodies };
/** mask freezes its decisions on the text `format` compacted: a replica must find them by that text's key. */
const MASK_FORMATTED: Scenario = {
  doc: { pipeline: ['format', 'mask'], components: { mask: { keep_recent: 1, min_tokens: 50 } } },
  bodies: jsonBodies,
};

let n = 0;
const uniqueTenant = (doc: PipelineDocument) => createTenantRuntime(`rt-${process.pid}-${Date.now()}-${n++}`, doc, 1);

/** The session on the in-memory store: the bytes every other run must forward. */
async function reference(sc: Scenario): Promise<string[]> {
  const r = replica(new MemoryHotStore({ ttlSeconds: 10_000, maxEntries: 100_000 }));
  const tenant = uniqueTenant(sc.doc);
  const out: string[] = [];
  for (const raw of sc.bodies) out.push((await send(r, tenant, raw)).outgoing);
  return out;
}

interface Counted {
  outgoing: string[];
  /** Round trips of each warm turn (turn index → count). */
  trips: Map<number, number>;
  /** Warm turns on which the pipeline asked about content keys no load had fetched. */
  rewrittenNew: number[];
}

/** One session through `replicas` in turn; `between` runs before each turn (a flush, say). */
async function drive(sc: Scenario, redis: RedisHotStore, replicas: Replica[], between?: (t: number) => Promise<void>): Promise<Counted> {
  const tenant = uniqueTenant(sc.doc);
  const out: Counted = { outgoing: [], trips: new Map(), rewrittenNew: [] };
  let session = '';
  for (let t = 0; t < TURNS; t++) {
    const r = replicas[t % replicas.length]!;
    await between?.(t);
    const learnedBefore = r.learned.get(`${tenant.id}\u0000${session}`).length;
    const before = redis.roundTrips;
    const sent = await send(r, tenant, sc.bodies[t]!);
    out.outgoing.push(sent.outgoing);
    session = sent.session;
    if (t === 0) continue;
    out.trips.set(t, redis.roundTrips - before);
    if (r.learned.get(`${tenant.id}\u0000${session}`).length > learnedBefore) out.rewrittenNew.push(t);
  }
  return out;
}

/** Redis in front of Postgres, as the gateway runs with REDIS_URL and DATABASE_URL. */
const tieredStores = (prefix = uniquePrefix()) =>
  createStores({
    redisUrl: REDIS_URL,
    databaseUrl: DATABASE_URL,
    dataDir: '',
    // A fixed key: no key file is generated in the working directory.
    encryption: { key: Buffer.alloc(32, 7).toString('base64') },
    ttlSeconds: 10_000,
    maxEntries: 100_000,
    redisPrefix: prefix,
  });

const over = (trips: Map<number, number>, max: number) => [...trips].filter(([, c]) => c > max);

let expected: string[];
let expectedMasked: string[];
let admin: Redis;

beforeAll(async () => {
  expected = await reference(AGENT);
  expectedMasked = await reference(MASK_FORMATTED);
  admin = new Redis(REDIS_URL);
});

afterAll(async () => {
  await admin.quit();
});

describe('Redis round trips on a warm turn', () => {
  it('plain Redis hot store: every warm turn is at most two round trips, new reformatted content included', async () => {
    const store = await RedisHotStore.connect({ url: REDIS_URL, prefix: uniquePrefix(), ttlSeconds: 10_000, maxEntries: 100_000 });
    try {
      const run = await drive(AGENT, store, [replica(store)]);
      // The transcript brings new JSON that `format` rewrites on several warm turns.
      expect(run.rewrittenNew.length).toBeGreaterThanOrEqual(3);
      expect(over(run.trips, 2)).toEqual([]);
      expect(run.outgoing).toEqual(expected);
    } finally {
      await store.close();
    }
  });

  it('Redis + Postgres (tiered): at most two Redis round trips on every warm turn, same bytes', async () => {
    const stores = await tieredStores();
    try {
      const redis = (stores.hot as TieredHotStore).hot as RedisHotStore;
      const run = await drive(AGENT, redis, [replica(stores.hot)]);
      expect(run.rewrittenNew.length).toBeGreaterThanOrEqual(3);
      expect(over(run.trips, 2)).toEqual([]);
      expect(run.outgoing).toEqual(expected);
    } finally {
      await stores.close();
    }
  });

  it('two replicas alternating: the one that never learned a rewritten key still replays its decision byte-identically', async () => {
    const store = await RedisHotStore.connect({ url: REDIS_URL, prefix: uniquePrefix(), ttlSeconds: 10_000, maxEntries: 100_000 });
    try {
      const run = await drive(MASK_FORMATTED, store, [replica(store), replica(store)]);
      expect(run.outgoing).toEqual(expectedMasked);
    } finally {
      await store.close();
    }
  });

  it('Redis flushed mid-session (tiered): the checkpoint restores the decisions, same bytes on a replica that learned nothing', async () => {
    const prefix = uniquePrefix();
    const stores = await tieredStores(prefix);
    try {
      const redis = (stores.hot as TieredHotStore).hot as RedisHotStore;
      const flushAt = new Set([8, 15]);
      const run = await drive(MASK_FORMATTED, redis, [replica(stores.hot), replica(stores.hot)], async (t) => {
        if (!flushAt.has(t)) return;
        await (stores.hot as TieredHotStore).flush(); // the checkpoint is written behind; let it land
        await flushPrefix(admin, prefix);
      });
      expect(run.outgoing).toEqual(expectedMasked);
    } finally {
      await stores.close();
    }
  });
});
