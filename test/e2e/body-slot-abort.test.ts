// A client that goes away while its body is read, or while it waits for a place among the bodies
// held whole (BodySlots), gives that place back: the next request is still served. Before, a
// request whose client had gone while it waited read a destroyed stream once its place came, never
// settled, and kept the place for the life of the process.
import { connect, type Socket } from 'node:net';
import { BodySlots } from '../../apps/gateway/src/http/compression-gate';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { openAiCompletion } from '../support/fake-upstream-json';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';

let upstream: FakeUpstream;
let gateway: GatewayHarness;

beforeAll(async () => {
  upstream = await startFakeUpstream(() => ({ kind: 'json', body: openAiCompletion('ok') }));
  gateway = await startGateway(upstream.url, { PRESET: 'agent' });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(50_000) }] });

/** Sends the headers and the first `bytes` of the body, then leaves the socket open. */
function partial(bytes: number): Promise<Socket> {
  const { port } = new URL(gateway.url);
  return new Promise((resolve) => {
    const s = connect(Number(port), '127.0.0.1', () => {
      s.write(
        `POST /openai/v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
          `x-context-guru-session: abort-${bytes}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`,
      );
      s.write(body.slice(0, bytes), () => resolve(s));
    });
    s.on('error', () => undefined);
  });
}

/** Waits until `check` holds, checking every 10 ms. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

async function served(): Promise<number> {
  const res = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-context-guru-session': 'after' },
    body,
  });
  await res.text();
  return res.status;
}

it('gives the place back when the client goes away mid-body', async () => {
  gateway.gw.bodies = new BodySlots(1);
  const s = await partial(10_000);
  await until(() => gateway.gw.bodies.inUse === 1);
  s.destroy();
  await until(() => gateway.gw.bodies.inUse === 0);
  expect(await served()).toBe(200);
  expect(gateway.gw.bodies.inUse).toBe(0);
});

it('gives the place back when the client went away while it waited for one', async () => {
  const slots = new BodySlots(1);
  gateway.gw.bodies = slots;
  expect(slots.take()).toBeUndefined(); // the one place is taken: the next request waits
  const s = await partial(10_000);
  await until(() => slots.waiters === 1);
  const closed = new Promise((r) => s.once('close', r));
  s.destroy();
  await closed;
  await new Promise((r) => setTimeout(r, 50));
  slots.give(); // the waiter gets the place, finds its client gone, and must hand it back
  await until(() => slots.inUse === 0);
  expect(await served()).toBe(200);
  expect(slots.inUse).toBe(0);
});
