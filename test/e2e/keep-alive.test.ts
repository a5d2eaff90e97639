// An agent's connection stays open between its turns. The proxy routes run on a node:http server
// handed to Fastify as its serverFactory, and Fastify applies its keepAliveTimeout only to servers
// it creates itself: the gateway had node's 5 s, so a connection idle for the few seconds a model
// takes to answer was closed under the client, and a turn the client sent as it closed failed
// with a reset the gateway never saw (no log line). The gateway keeps idle connections 72 s, as
// Fastify does by default, and says so in its Keep-Alive header.
import { connect, type Socket } from 'node:net';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { openAiCompletion } from '../support/fake-upstream-json';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';

jest.setTimeout(30_000);

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

const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'What changed?' }] });
const request =
  `POST /openai/v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
  `x-context-guru-session: keep-alive\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** Sends one request on `s` and resolves with the response head once the whole answer arrived (sized or chunked). */
function exchange(s: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (c: Buffer) => {
      got += c.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(got)?.[1];
      const whole = length === undefined ? got.endsWith('\r\n0\r\n\r\n') : got.length >= end + 4 + Number(length);
      if (end >= 0 && whole) {
        s.off('data', onData);
        resolve(got.slice(0, end));
      }
    };
    s.on('data', onData);
    s.once('close', () => reject(new Error(`connection closed after ${JSON.stringify(got.slice(0, 200))}`)));
    s.write(request);
  });
}

it('keeps an idle connection past node’s 5 s default and serves the next turn on it', async () => {
  const { port } = new URL(gateway.url);
  const s = await new Promise<Socket>((resolve) => {
    const c = connect(Number(port), '127.0.0.1', () => resolve(c));
  });
  let closedAt: number | undefined;
  s.once('close', () => (closedAt = Date.now()));
  try {
    const head = await exchange(s);
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head).toMatch(/\r\nkeep-alive: timeout=72\r\n/i);
    await new Promise((r) => setTimeout(r, 6_000));
    expect(closedAt).toBeUndefined();
    expect(await exchange(s)).toMatch(/^HTTP\/1\.1 200/);
  } finally {
    s.destroy();
  }
});
