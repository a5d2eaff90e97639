// Under overload the gateway sheds new compression work instead of queueing it: with every
// compression slot taken, a warm turn is still served at once, its provider-cached prefix replayed
// byte-identically from earlier turns, its new tail forwarded as received, and the shed counted.
import { request } from 'node:http';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { jsonScript } from '../support/scripted-model';
import { agentSteps, openaiTurn } from '../support/transcripts';
import { plannedFrom } from '../support/planned-rewrite';

let upstream: FakeUpstream;
let gateway: GatewayHarness;

beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  gateway = await startGateway(upstream.url, { PRESET: 'agent', COMPRESSION_SLOTS: '1' });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const steps = agentSteps(8, 3);
const session = { 'content-type': 'application/json', 'x-context-guru-session': 'shed-1' };
/** Per turn sent, the first message a planned rewrite announced it changes (docs/cache.md), if any. */
const planned: Array<number | undefined> = [];
const post = (t: number) =>
  fetch(`${gateway.url}/openai/v1/chat/completions`, { method: 'POST', headers: session, body: JSON.stringify(openaiTurn(steps, t)) }).then(
    (r) => {
      planned.push(plannedFrom(r.headers.get('x-context-guru-rewrite')));
      return r.status;
    },
  );
const forwarded = (i: number) => (upstream.requests[i]!.body.messages as unknown[]).map((m) => JSON.stringify(m));

/** Fills the one-place compression queue and keeps it full until released. */
function holdSlot(): { destroy(): void } {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  void (async () => {
    if (gateway.gw.compression.admit()) {
      await held;
      gateway.gw.compression.leave(true);
    }
  })();
  return { destroy: release };
}

const shedCount = async () => Number(/^cg_shed_total (\d+)/m.exec(await (await fetch(`${gateway.url}/metrics`)).text())?.[1] ?? NaN);

describe('with the compression queue full', () => {
  it('serves a warm turn at once, replays the cached prefix byte-identically and compresses nothing new', async () => {
    for (let t = 4; t <= 6; t++) expect(await post(t)).toBe(200);
    const before = await shedCount();
    const holder = holdSlot();
    await new Promise((r) => setTimeout(r, 100));
    try {
      expect(await post(7)).toBe(200);
    } finally {
      holder.destroy();
    }
    expect(await shedCount()).toBe(before + 1);
    const last = upstream.requests.length - 1;
    const prev = forwarded(last - 1);
    const shed = forwarded(last);
    const client = openaiTurn(steps, 7).messages.map((m) => JSON.stringify(m));
    // The whole previous turn (the provider's cached prefix) is forwarded as it was last time…
    expect(shed.slice(0, prev.length)).toEqual(prev);
    expect(prev.some((m, i) => m !== client[i])).toBe(true);
    // …and the new tail as the client sent it: no new compression work was done.
    expect(shed.slice(prev.length)).toEqual(client.slice(prev.length));
  });

  it('the next turn with a free slot keeps that prefix (no bust) and compresses again', async () => {
    expect(await post(8)).toBe(200);
    const last = upstream.requests.length - 1;
    const shed = forwarded(last - 1);
    const next = forwarded(last);
    // Unchanged but from exactly where a planned rewrite (agent's mask, once read) said.
    const firstChange = shed.findIndex((m, i) => next[i] !== m);
    expect(firstChange === -1 ? undefined : firstChange).toBe(planned.at(-1));
    const client = openaiTurn(steps, 8).messages.map((m) => JSON.stringify(m));
    expect(next.slice(shed.length).some((m, i) => m !== client[shed.length + i])).toBe(true);
  });
});

describe('admission on arrival', () => {
  it('counts a request whose body is still arriving: a complete one arriving after it is shed, the first is not', async () => {
    const body = Buffer.from(JSON.stringify(openaiTurn(steps, 3)));
    const url = new URL(`${gateway.url}/openai/v1/chat/completions`);
    const before = await shedCount();
    let answered!: (status: number) => void;
    const slow = new Promise<number>((r) => (answered = r));
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { ...session, 'x-context-guru-session': 'slow-1', 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => answered(res.statusCode ?? 0));
      },
    );
    req.write(body.subarray(0, 100));
    await new Promise((r) => setTimeout(r, 100));
    const other = await fetch(url, {
      method: 'POST',
      headers: { ...session, 'x-context-guru-session': 'quick-1' },
      body: JSON.stringify(openaiTurn(steps, 2)),
    });
    expect(other.status).toBe(200);
    expect(await shedCount()).toBe(before + 1);
    req.end(body.subarray(100));
    expect(await slow).toBe(200);
    expect(await shedCount()).toBe(before + 1);
  });
});
