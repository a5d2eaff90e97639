// A Redis outage with Postgres up is a latency event, not a cache bust: a gateway process whose
// Redis is stopped mid-session and restarted empty, or paused (CLIENT PAUSE), serves each turn
// from the durable copies — every message the provider cached re-sent byte for byte, every marker
// resolvable — and keeps compressing the tail; a Postgres that stalls while Redis answers changes
// nothing on the request path. Real processes: a private redis-server (restarted on its own port),
// the gateway entry, Postgres (through a TCP proxy that can stall it).
import { Redis } from 'ioredis';
import { REWRITE_HEADER } from '../../../apps/gateway/src/proxy/chat/respond.step';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../../support/fake-upstream';
import { head, markerIds, markerIdOf, rawMessages, withoutBreakpoints } from '../../support/forwarded-bytes';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { startPrivateRedis, startReplica, type PrivateRedis, type Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy';
import { agentSteps, anthropicTurn } from '../../support/transcripts';

jest.setTimeout(240_000);

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n';

let upstream: FakeUpstream;
let redis: PrivateRedis;
let db: FreshDatabase;
let pgProxy: TcpProxy;
let gateway: Replica;

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
    CONFIG,
  });
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await redis?.stop();
  await pgProxy?.close();
  await db?.drop();
});

interface Sent {
  turn: number;
  forwarded: RecordedRequest;
  ms: number;
  /** The response's x-context-guru-rewrite header: a planned (priced) rewrite it announced. */
  rewrite: string | null;
}

/** One client turn of `session`: the body the provider got and how long the client waited. */
async function send(session: string, steps: ReturnType<typeof agentSteps>, t: number): Promise<Sent> {
  const before = upstream.requests.length;
  const started = performance.now();
  const res = await fetch(`${gateway.url}/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'x-context-guru-session': session },
    body: JSON.stringify(anthropicTurn(steps, t)),
  });
  expect(res.status).toBe(200);
  await res.text();
  const ms = performance.now() - started;
  expect(upstream.requests.length).toBe(before + 1);
  return { turn: t, forwarded: upstream.requests[before]!, ms, rewrite: res.headers.get(REWRITE_HEADER) };
}

/**
 * No cache bust: the head never changes and every message already sent is re-sent byte for byte,
 * except from the message a turn's planned (priced) rewrite names in its response header.
 */
function expectNoBust(sent: readonly Sent[]): void {
  const busts: string[] = [];
  for (let i = 1; i < sent.length; i++) {
    const prev = rawMessages(sent[i - 1]!.forwarded.raw).map(withoutBreakpoints);
    const next = rawMessages(sent[i]!.forwarded.raw).map(withoutBreakpoints);
    if (head(sent[i]!.forwarded.raw) !== head(sent[0]!.forwarded.raw)) busts.push(`turn ${sent[i]!.turn}: head`);
    const at = prev.findIndex((m, k) => next[k] !== m);
    if (at >= 0 && sent[i]!.rewrite !== `planned; from=${at}`) busts.push(`turn ${sent[i]!.turn}: message ${at}`);
  }
  expect(busts).toEqual([]);
}

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

async function expectResolvable(session: string, raw: string): Promise<void> {
  const ids = [...markerIds(raw)];
  expect(ids.length).toBeGreaterThan(0);
  for (const id of ids) {
    const res = await fetch(`${gateway.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': session } });
    expect([id, res.status]).toEqual([id, 200]);
    expect(markerIdOf(await res.text())).toBe(id);
  }
}

async function failOpen(): Promise<number> {
  return ((await (await fetch(`${gateway.url}/stats`)).json()) as { fail_open: number }).fail_open;
}

async function storeStatus(): Promise<string> {
  return ((await (await fetch(`${gateway.url}/readyz`)).json()) as { store: { status: string } }).store.status;
}

async function until(what: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await what()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('condition never met');
}

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
