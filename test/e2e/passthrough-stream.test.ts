// Preset off is a transparent proxy: a body of declared length is streamed upstream unread and
// arrives byte-identical; a body without a declared length is read whole and still counted
// against the limit, so the 413 contract holds either way.
import { request } from 'node:http';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { jsonScript } from '../support/scripted-model';
import { agentSteps, openaiTurn } from '../support/transcripts';

let upstream: FakeUpstream;
let gateway: GatewayHarness;

/** The scripted answers, sent with a declared length as providers send a JSON answer. */
const script = jsonScript({ expand: false });
const withLength = (req: RecordedRequest): ScriptedReply => {
  const reply = script(req);
  if (reply.kind !== 'json') return reply;
  const text = JSON.stringify(reply.body);
  return { kind: 'raw', status: 200, body: text, headers: { 'content-length': String(Buffer.byteLength(text)) } };
};

beforeAll(async () => {
  upstream = await startFakeUpstream(withLength);
  gateway = await startGateway(upstream.url, { PRESET: 'off', BODY_LIMIT_BYTES: '200000' });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

/** Posts `parts` one write at a time (`gapMs` apart); without `length`, the body goes out chunked. */
function post(
  parts: Array<string | Buffer>,
  length: boolean,
  gapMs = 0,
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const total = parts.reduce((n, p) => n + Buffer.byteLength(p), 0);
  return new Promise((resolve, reject) => {
    const req = request(
      `${gateway.url}/openai/v1/chat/completions`,
      { method: 'POST', headers: { 'content-type': 'application/json', ...(length ? { 'content-length': String(total) } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    void (async () => {
      for (const [i, p] of parts.entries()) {
        if (i > 0 && gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
        req.write(p);
      }
      req.end();
    })();
  });
}

// Pretty-printed with odd spacing, so any re-serialisation would show.
const body = JSON.stringify(openaiTurn(agentSteps(3, 5), 3), null, 3);
const halves = [body.slice(0, 20_000), body.slice(20_000)];

describe('preset off forwards the client body as it is', () => {
  it('streams a body of declared length upstream byte-identical, with its length', async () => {
    const before = upstream.requests.length;
    const res = await post(halves, true);
    expect(res.status).toBe(200);
    const got = upstream.requests[before]!;
    expect(got.raw).toBe(body);
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(got.headers['transfer-encoding']).toBeUndefined();
    // The answer is relayed as the upstream's bytes, so its declared length goes to the client too.
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
    expect(res.headers['transfer-encoding']).toBeUndefined();
  });

  it('streams a body whose second half comes later, byte-identical (the parser has not finished it)', async () => {
    const before = upstream.requests.length;
    const started = Date.now();
    const res = await post([body.slice(0, body.length >> 1), body.slice(body.length >> 1)], true, 300);
    // The second half really came later: the request could not have been answered before it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(res.status).toBe(200);
    expect(upstream.requests[before]!.raw).toBe(body);
    expect(upstream.requests[before]!.headers['content-length']).toBe(String(Buffer.byteLength(body)));
  });

  it('sends a body that arrived whole as those bytes, answering invalid UTF-8 in it with 400 and forwarding nothing', async () => {
    const before = upstream.requests.length;
    const whole = await post([body], true);
    expect(whole.status).toBe(200);
    expect(upstream.requests[before]!.raw).toBe(body);
    const bad = await post(
      [Buffer.concat([Buffer.from(body.slice(0, 100)), Buffer.from([0xc3, 0x28]), Buffer.from(body.slice(100))])],
      true,
    );
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.message).toContain('byte 100');
    expect(upstream.requests.length).toBe(before + 1);
  });

  it('forwards a chunked body under the limit byte-identical', async () => {
    const before = upstream.requests.length;
    const res = await post(halves, false);
    expect(res.status).toBe(200);
    expect(upstream.requests[before]!.raw).toBe(body);
  });

  it('answers a chunked body over the limit with 413 and never forwards it', async () => {
    const before = upstream.requests.length;
    const res = await post(
      Array.from({ length: 5 }, () => 'x'.repeat(60_000)),
      false,
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text).error.message).toMatch(/200000 byte limit/);
    expect(upstream.requests.length).toBe(before);
  });

  it('answers a declared length over the limit with 413 and never forwards it', async () => {
    const before = upstream.requests.length;
    const res = await post(['x'.repeat(250_000)], true);
    expect(res.status).toBe(413);
    expect(upstream.requests.length).toBe(before);
  });
});

describe('a streamed body is still checked on the way', () => {
  it('answers invalid UTF-8 in a streamed body with 400 naming the byte, and forwards nothing', async () => {
    const before = upstream.requests.length;
    const bad = Buffer.concat([Buffer.from(halves[0]!), Buffer.from([0xc3, 0x28]), Buffer.from(halves[1]!)]);
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        `${gateway.url}/openai/v1/chat/completions`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(bad.length) } },
        (r) => {
          let text = '';
          r.on('data', (c: Buffer) => (text += c.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(bad);
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error.message).toContain(`byte ${halves[0]!.length}`);
    expect(upstream.requests.length).toBe(before);
  });

  it('answers a non-JSON content type with 415 before streaming anything', async () => {
    const before = upstream.requests.length;
    const res = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    expect(upstream.requests.length).toBe(before);
  });
});
