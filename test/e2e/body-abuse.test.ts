// Bodies that abuse the read: one declared over the limit gets a 413 an ordinary client can read
// (before, the gateway answered and closed while the client was still writing, and a client that
// sends its whole body before reading got a reset instead); one that trickles gets the dialect's
// 408 once BODY_READ_TIMEOUT_MS passes (before, nothing until Node's 300 s request timeout). The
// timeout also bounds the drain, so it is set well above what writing 40 MB takes here.
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { openAiCompletion } from '../support/fake-upstream-json';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';

jest.setTimeout(60_000);

const LIMIT = 32 * 1024 * 1024;
let upstream: FakeUpstream;
let gateway: GatewayHarness;

beforeAll(async () => {
  upstream = await startFakeUpstream(() => ({ kind: 'json', body: openAiCompletion('ok') }));
  gateway = await startGateway(upstream.url, { PRESET: 'agent', BODY_LIMIT_BYTES: String(LIMIT), BODY_READ_TIMEOUT_MS: '5000' });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const port = () => Number(new URL(gateway.url).port);

/** Writes the headers and the whole `size`-byte body, and only then reads what came back. */
function writeAllThenRead(path: string, size: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port(), '127.0.0.1');
    const got: Buffer[] = [];
    s.on('data', (c: Buffer) => got.push(c));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(got).toString()));
    s.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`);
    const piece = Buffer.alloc(1024 * 1024, 0x20);
    let left = size;
    const pump = (): void => {
      while (left > 0) {
        const n = Math.min(left, piece.length);
        left -= n;
        if (!s.write(n === piece.length ? piece : piece.subarray(0, n))) return void s.once('drain', pump);
      }
    };
    pump();
  });
}

it('a 40 MB body against a 32 MB limit gets a 413 the client reads after writing it all', async () => {
  const answer = await writeAllThenRead('/openai/v1/chat/completions', 40 * 1024 * 1024);
  expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'request_too_large' } });
});

it("node's http client, writing a 40 MB body, gets the 413 in the Anthropic shape", async () => {
  const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ port: port(), host: '127.0.0.1', method: 'POST', path: '/anthropic/v1/messages' }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setHeader('content-type', 'application/json');
    req.setHeader('content-length', String(40 * 1024 * 1024));
    const piece = Buffer.alloc(1024 * 1024, 0x20);
    let n = 0;
    const pump = (): void => {
      while (n < 40) {
        n++;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
  expect(status.status).toBe(413);
  expect(JSON.parse(status.body)).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
});

/** Sends the headers and one byte of a `declared`-byte body; resolves with all it hears back. */
function trickle(path: string, declared = 1000): { socket: Socket; answer: Promise<string> } {
  const socket = connect(port(), '127.0.0.1');
  socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\n\r\n{`);
  const got: Buffer[] = [];
  socket.on('data', (c: Buffer) => got.push(c));
  socket.on('error', () => undefined);
  // Failure detector only: with no read timeout the gateway would not answer for 300 s.
  const detector = setTimeout(() => socket.destroy(), 15_000);
  const answer = new Promise<string>((resolve) =>
    socket.on('close', () => {
      clearTimeout(detector);
      resolve(Buffer.concat(got).toString());
    }),
  );
  return { socket, answer };
}

it('a trickled body is answered 408 in the dialect shape once the read timeout passes', async () => {
  const openai = trickle('/openai/v1/chat/completions');
  const anthropic = trickle('/anthropic/v1/messages');
  const [o, a] = await Promise.all([openai.answer, anthropic.answer]);
  expect(o.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
  expect(JSON.parse(o.slice(o.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'request_timeout' } });
  expect(a.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
  expect(JSON.parse(a.slice(a.indexOf('\r\n\r\n') + 4))).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  // The places the tricklers held are back.
  expect(gateway.gw.bodies.inUse).toBe(0);
});
