// The gateway on the two production Redis topologies, with real servers started here: a Redis
// Cluster (three primaries with a replica each) and a Sentinel-managed primary with a replica.
// A session runs through the gateway entry; then the primary holding the session's slot (or
// Sentinel's primary) is killed mid-session: the replica is promoted and the gateway keeps
// serving — no bust of the provider's cached prefix, no fail-open, every marker still resolvable,
// and the turns after the promotion land on the new primary. Failover figures are printed.
// On Sentinel, turns also run between the kill and the promotion: they are written to Postgres
// only, the promoted replica holds the session as it was before them, and the gateway repays it
// (turn and decisions from Postgres) before serving the session hot again — while more turns go on.
// A turn whose rewrites met a repayment that had just finished once lost them from the hot record
// (a bust on the next turn, ~1 run in 5; test/int/storage/hot-debt-rewrites.test.ts pins the cause).
// The cluster test sends none inside its window (a 3–4 s promotion), to keep the runtime moderate.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { deploymentKeys } from '../../support/forwarded-bytes';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { startRedisCluster, startSentinels, type RedisClusterSetup, type SentinelSetup } from '../../support/redis-topologies';
import { startReplica, type Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { expectNoBust, expectResolvable, failOpen, sendTurn, storeStatus, until, type Sent } from '../../support/session-turns';
import { agentSteps } from '../../support/transcripts';
import { scanKeys } from '../storage/redis-support';

jest.setTimeout(240_000);

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n';
/** The default tenant's keys: `<REDIS_PREFIX>{default}:…`. */
const PREFIX = 'cgtopo:';
const DEFAULT_KEYS = `${PREFIX}{default}:`;

let upstream: FakeUpstream;
let db: FreshDatabase;
/** The gateways' CG_ENCRYPTION_KEY, and their key ring read from outside: what marker ids are keyed by. */
const KEK = randomBytes(32).toString('base64');
let kek: ReturnType<typeof deploymentKeys>;

beforeAll(async () => {
  db = await freshDatabase('redis_topologies');
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  kek = deploymentKeys(db.url, KEK);
});

afterAll(async () => {
  await kek?.close();
  await upstream?.close();
  await db?.drop();
});

function gatewayOn(redisEnv: Record<string, string>): Promise<Replica> {
  return startReplica({
    ...redisEnv,
    REDIS_PREFIX: PREFIX,
    // info: a failure below prints the gateway's log, which then says whether Redis ever recovered.
    LOG_LEVEL: 'info',
    DATABASE_URL: db.url,
    CG_ENCRYPTION_KEY: KEK,
    OPENAI_UPSTREAM: upstream.url,
    ANTHROPIC_UPSTREAM: upstream.url,
    CONFIG,
  });
}

/** The default tenant's turn records on the primaries at `ports` (key → value). */
async function turnRecords(ports: readonly number[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const port of ports) {
    const c = new Redis(port, '127.0.0.1');
    try {
      for (const k of await scanKeys(c, `${DEFAULT_KEYS}turn:`)) out.set(k, (await c.get(k)) ?? '');
    } finally {
      c.disconnect();
    }
  }
  return out;
}

/** Records that changed (or appeared) between two looks: written in between. */
function changed(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...after].filter(([k, v]) => before.get(k) !== v).map(([k]) => k);
}

async function primaryPorts(cluster: RedisClusterSetup): Promise<number[]> {
  const now = await cluster.primaries();
  for (const p of now) p.disconnect();
  return now.map((p) => Number(p.options.port));
}

/**
 * A client's next turn comes after the provider's answer, far past the 50 ms in which a turn's
 * durable copy is queued (write-behind): a kill right after a turn lets that window pass first,
 * as redis-outage.test.ts does, so what is tested is the failover, not a crash inside the window.
 */
const settleWrites = () => new Promise((r) => setTimeout(r, 300));

/** Runs turns from..to of `session`, appending to `sent`. */
async function turns(gw: Replica, session: string, sent: Sent[], from: number, to: number): Promise<void> {
  const steps = agentSteps(24, 53);
  for (let t = from; t <= to; t++) sent.push(await sendTurn(gw.url, upstream, session, steps, t));
}

describe('Redis Cluster', () => {
  let cluster: RedisClusterSetup;
  let gw: Replica;

  beforeAll(async () => {
    // Its own ports: redis-cluster.store.test.ts runs a cluster on 17000+ beside this one.
    cluster = await startRedisCluster(3, 1, 17040);
    gw = await gatewayOn({ REDIS_CLUSTER_NODES: cluster.nodes });
  });
  afterAll(async () => {
    await gw?.stop();
    await cluster?.stop();
  });

  it('serves a session, and keeps serving it when the primary of its slot is killed', async () => {
    const sent: Sent[] = [];
    await turns(gw, 'cluster', sent, 1, 8);
    const failedBefore = await failOpen(gw.url);
    const primaries = await cluster.primaries();
    const holder = (
      await Promise.all(primaries.map(async (p) => ((await scanKeys(p, DEFAULT_KEYS)).length ? p.options.port : undefined)))
    ).find((p) => p !== undefined);
    for (const p of primaries) p.disconnect();
    const victim = cluster.servers.find((s) => s.port === holder);
    if (!victim) throw new Error('no primary holds the session');

    await settleWrites();
    const killedAt = performance.now();
    await victim.kill();
    // The replica of the killed primary takes its slots.
    const promoted = async () => {
      const ports = await primaryPorts(cluster);
      return ports.length === 3 && !ports.includes(victim.port);
    };
    await until(promoted).catch((e: unknown) => {
      throw new Error(`replica never promoted: ${String(e)}`);
    });
    const promotedMs = performance.now() - killedAt;
    await until(async () => (await storeStatus(gw.url)) === 'ok');
    const ports = await primaryPorts(cluster);
    const before = await turnRecords(ports);
    await turns(gw, 'cluster', sent, 9, 24);

    expectNoBust(sent);
    expect(await failOpen(gw.url)).toBe(failedBefore);
    await expectResolvable(gw.url, kek.keys, 'cluster', sent[sent.length - 1]!.forwarded.raw);
    expect(gw.stderr()).not.toMatch(/CROSSSLOT/);
    // The session's turn record moved on where the promoted replica now serves its slot.
    expect(changed(before, await turnRecords(ports)).length).toBeGreaterThan(0);
    console.log(`redis cluster: primary killed, replica promoted after ${promotedMs.toFixed(0)} ms; 24 turns, no bust`);
  });
});

describe('Redis Sentinel', () => {
  let sentinel: SentinelSetup;
  let gw: Replica;

  beforeAll(async () => {
    sentinel = await startSentinels();
    gw = await gatewayOn({ REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_MASTER: sentinel.master });
  });
  afterAll(async () => {
    await gw?.stop();
    await sentinel?.stop();
  });

  it('serves a session, and keeps serving it after the primary is killed and the replica promoted', async () => {
    const sent: Sent[] = [];
    await turns(gw, 'sentinel', sent, 1, 8);
    expect((await turnRecords([sentinel.primary.port])).size).toBeGreaterThan(0);
    const failedBefore = await failOpen(gw.url);

    await settleWrites();
    const killedAt = performance.now();
    await sentinel.primary.kill();
    // Turns inside the failover window: served from Postgres alone, while the replica about to be
    // promoted keeps the session's older hot copy. They must not be overtaken by it afterwards.
    let t = 9;
    const promoted = async () => (await sentinel.primaryPort().catch(() => 0)) === sentinel.replica.port;
    while (t <= 12 && !(await promoted())) await turns(gw, 'sentinel', sent, t, t++);
    const inWindow = t - 9;
    await until(promoted);
    const promotedMs = performance.now() - killedAt;
    await until(async () => (await storeStatus(gw.url)) === 'ok').catch((e: unknown) => {
      throw new Error(`the store never answered again after the promotion: ${String(e)}\n${gw.stderr()}`);
    });
    const recoveredMs = performance.now() - killedAt;
    const before = await turnRecords([sentinel.replica.port]);
    await turns(gw, 'sentinel', sent, t, 24);

    expectNoBust(sent);
    expect(await failOpen(gw.url)).toBe(failedBefore);
    await expectResolvable(gw.url, kek.keys, 'sentinel', sent[sent.length - 1]!.forwarded.raw);
    // Written after the promotion, so by the gateway to the new primary.
    expect(changed(before, await turnRecords([sentinel.replica.port])).length).toBeGreaterThan(0);
    expect(inWindow).toBeGreaterThan(0);
    console.log(
      `redis sentinel: primary killed, ${inWindow} turns before the replica was promoted after ${promotedMs.toFixed(0)} ms, ` +
        `store ok after ${recoveredMs.toFixed(0)} ms; 24 turns, no bust`,
    );
  });
});
