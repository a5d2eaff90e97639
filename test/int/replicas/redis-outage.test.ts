// A Redis outage with Postgres up is a latency event, not a cache bust: a gateway process whose
// Redis is stopped mid-session and restarted empty, or paused (CLIENT PAUSE), serves each turn
// from the durable copies — every message the provider cached re-sent byte for byte, every marker
// resolvable — and keeps compressing the tail; a Postgres that stalls while Redis answers changes
// nothing on the request path. Real processes: a private redis-server (restarted on its own port),
// the gateway entry, Postgres (through a TCP proxy that can stall it).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { deploymentKeys, markerIds } from '../../support/forwarded-bytes';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { startPrivateRedis, startReplica, type PrivateRedis, type Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy';
import {
  expectNoBust,
  expectResolvable as expectResolvableAt,
  failOpen as failOpenAt,
  sendTurn,
  storeStatus as storeStatusAt,
  until,
  type Sent,
  type Steps,
} from '../../support/session-turns';
import { agentSteps } from '../../support/transcripts';

jest.setTimeout(240_000);

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n';

let upstream: FakeUpstream;
let redis: PrivateRedis;
let db: FreshDatabase;
let pgProxy: TcpProxy;
let gateway: Replica;
/** The replica's CG_ENCRYPTION_KEY, and its key ring read from outside: what marker ids are keyed by. */
const KEK = randomBytes(32).toString('base64');
let kek: ReturnType<typeof deploymentKeys>;

beforeAll(async () => {
  db = await freshDatabase('redis_outage');
  redis = await startPrivateRedis();
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  const pg = new URL(db.url);
  pgProxy = await startTcpProxy(pg.hostname, Number(pg.port || 5432));
  pg.host = `127.0.0.1:${pgProxy.port}`;
  gateway = await startReplica({
    REDIS_URL: redis.url,
    DATABASE_URL: pg.toString(),
    OPENAI_UPSTREAM: upstream.url,
    ANTHROPIC_UPSTREAM: upstream.url,
    CG_ENCRYPTION_KEY: KEK,
    CONFIG,
  });
  kek = deploymentKeys(db.url, KEK);
});

afterAll(async () => {
  await kek?.close();
  await gateway?.stop();
  await upstream?.close();
  await redis?.stop();
  await pgProxy?.close();
  await db?.drop();
});

const send = (session: string, steps: Steps, t: number): Promise<Sent> => sendTurn(gateway.url, upstream, session, steps, t);

/** Turns (counted from `from`) until a forwarded body carries a marker no earlier one did. */
function turnsToNewMarker(sent: readonly Sent[], from: number): number | undefined {
  const seen = new Set<string>();
  for (const s of sent) {
    const ids = markerIds(s.forwarded.raw);
    const fresh = [...ids].some((id) => !seen.has(id));
    for (const id of ids) seen.add(id);
    if (s.turn >= from && fresh) return s.turn - from + 1;
  }
  return undefined;
}

const expectResolvable = (session: string, raw: string) => expectResolvableAt(gateway.url, kek.keys, session, raw);
const failOpen = () => failOpenAt(gateway.url);
const storeStatus = () => storeStatusAt(gateway.url);

/** The median client wait of turns `from`..`to` (a figure printed, never asserted). */
function medianMs(sent: readonly Sent[], from: number, to: number): number {
  const xs = sent.filter((s) => s.turn >= from && s.turn <= to).map((s) => s.ms);
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
}
const settleWrites = () => new Promise((r) => setTimeout(r, 300));

describe('Redis away with Postgres up', () => {
  it('stopped mid-session and restarted empty: no bust, markers resolvable, compression goes on', async () => {
    const steps = agentSteps(26, 31);
    const sent: Sent[] = [];
    for (let t = 1; t <= 10; t++) sent.push(await send('restart', steps, t));
    await settleWrites();
    const failedBefore = await failOpen();

    await redis.stop();
    try {
      for (let t = 11; t <= 14; t++) sent.push(await send('restart', steps, t));
      await expectResolvable('restart', sent[sent.length - 1]!.forwarded.raw);
    } finally {
      await redis.restart(); // empty: no persistence
    }
    await until(async () => (await storeStatus()) === 'ok');
    for (let t = 15; t <= 26; t++) sent.push(await send('restart', steps, t));

    expectNoBust(sent);
    expect(await failOpen()).toBe(failedBefore);
    const duringOutage = turnsToNewMarker(sent, 11);
    const afterRestart = turnsToNewMarker(sent, 15);
    expect(duringOutage).toBeDefined();
    expect(afterRestart).toBeDefined();
    await expectResolvable('restart', sent[sent.length - 1]!.forwarded.raw);
    const ms = (from: number, to: number) => medianMs(sent, from, to);
    console.log(
      `redis stopped: median turn ${ms(3, 10).toFixed(1)} ms with Redis, ${ms(11, 14).toFixed(1)} ms without, ` +
        `${ms(15, 26).toFixed(1)} ms after the empty restart; a new marker ${duringOutage} turn(s) into the outage, ` +
        `${afterRestart} turn(s) after the restart`,
    );
  });

  it('paused (CLIENT PAUSE): the turns wait for the command deadline once, then go on from Postgres', async () => {
    const steps = agentSteps(18, 37);
    const sent: Sent[] = [];
    for (let t = 1; t <= 8; t++) sent.push(await send('paused', steps, t));
    await settleWrites();
    const failedBefore = await failOpen();
    const admin = new Redis(redis.url);
    try {
      await admin.call('CLIENT', 'PAUSE', '4000', 'ALL');
      for (let t = 9; t <= 11; t++) sent.push(await send('paused', steps, t));
    } finally {
      admin.disconnect();
    }
    await until(async () => (await storeStatus()) === 'ok');
    await settleWrites();
    for (let t = 12; t <= 18; t++) sent.push(await send('paused', steps, t));

    expectNoBust(sent);
    expect(await failOpen()).toBe(failedBefore);
    expect(turnsToNewMarker(sent, 12)).toBeDefined();
    await expectResolvable('paused', sent[sent.length - 1]!.forwarded.raw);
    const ms = (from: number, to: number) => medianMs(sent, from, to);
    console.log(
      `redis paused: median turn ${ms(3, 8).toFixed(1)} ms before, turns during the pause ` +
        `${sent
          .filter((s) => s.turn >= 9 && s.turn <= 11)
          .map((s) => s.ms.toFixed(0))
          .join(' / ')} ms, ${ms(12, 18).toFixed(1)} ms after`,
    );
  });
});

describe('Postgres stalled with Redis up', () => {
  it('changes nothing on the request path of a live session, and the queued writes land once it answers', async () => {
    const steps = agentSteps(16, 41);
    const sent: Sent[] = [];
    for (let t = 1; t <= 6; t++) sent.push(await send('stalled', steps, t));
    const failedBefore = await failOpen();
    pgProxy.stall();
    try {
      for (let t = 7; t <= 12; t++) sent.push(await send('stalled', steps, t));
    } finally {
      pgProxy.resume();
    }
    for (let t = 13; t <= 16; t++) sent.push(await send('stalled', steps, t));
    expectNoBust(sent);
    expect(await failOpen()).toBe(failedBefore);
    expect(turnsToNewMarker(sent, 7)).toBeDefined();
    await expectResolvable('stalled', sent[sent.length - 1]!.forwarded.raw);
  });
});
