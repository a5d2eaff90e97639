// Hostile bodies and faulty providers: every case gets a precise answer in the dialect's error
// shape, and nothing the gateway refused ever reaches the provider.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { jsonScript } from '../support/scripted-model';

let upstream: FakeUpstream;
let gateway: GatewayHarness;

beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  gateway = await startGateway(upstream.url, { PRESET: 'agent', BODY_LIMIT_BYTES: '2000000' });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const OPENAI = '/openai/v1/chat/completions';
const ANTHROPIC = '/anthropic/v1/messages';

async function post(path: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const before = upstream.requests.length;
  const res = await fetch(`${gateway.url}${path}`, { method: 'POST', body, headers });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as Record<string, any>, forwarded: upstream.requests.length - before };
}

describe('invalid UTF-8', () => {
  const head = Buffer.from('{"model":"m","messages":[{"role":"user","content":"ab');
  const body = Buffer.concat([head, Buffer.from([0xff, 0xfe]), Buffer.from('cd"}]}')]);

  it('answers 400 naming the byte offset, in the OpenAI shape, and forwards nothing', async () => {
    const r = await post(OPENAI, body);
    expect(r.status).toBe(400);
    expect(r.json.error.type).toBe('invalid_request_error');
    expect(r.json.error.message).toContain(`byte ${head.length}`);
    expect(r.forwarded).toBe(0);
  });

  it('answers 400 in the Anthropic shape on the Anthropic route', async () => {
    const r = await post(ANTHROPIC, body);
    expect(r.status).toBe(400);
    expect(r.json.type).toBe('error');
    expect(r.json.error.type).toBe('invalid_request_error');
    expect(r.json.error.message).toMatch(/UTF-8.*byte \d+/);
    expect(r.forwarded).toBe(0);
  });
});

describe('deep nesting', () => {
  const depth = 100_000;
  const nested = '['.repeat(depth) + ']'.repeat(depth);

  it('rejects 100,000 nested arrays in an Anthropic tool result with 400 and forwards nothing', async () => {
    const raw = `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"run it"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x","extra":${nested}}]}]}]}`;
    const r = await post(ANTHROPIC, raw);
    expect(r.status).toBe(400);
    expect(r.json.error.type).toBe('invalid_request_error');
    expect(r.json.error.message).toMatch(/nest/);
    expect(r.forwarded).toBe(0);
  });

  it('rejects deep nesting in OpenAI message content with 400 and forwards nothing', async () => {
    const raw = `{"model":"m","messages":[{"role":"user","content":${nested}}]}`;
    const r = await post(OPENAI, raw);
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/nest/);
    expect(r.forwarded).toBe(0);
  });

  it('still serves JSON text nested deeply inside a string (components decline, the body goes out)', async () => {
    const raw = JSON.stringify({
      model: 'm',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'run', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: nested },
      ],
    });
    const r = await post(OPENAI, raw);
    expect(r.status).toBe(200);
    expect(r.forwarded).toBe(1);
  });
});

describe('content types', () => {
  const ok = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
    'answers %s with 415 and forwards nothing',
    async (ct) => {
      const r = await post(OPENAI, ok, { 'content-type': ct });
      expect(r.status).toBe(415);
      expect(r.json.error.message).toContain('content-type');
      expect(r.forwarded).toBe(0);
    },
  );

  it('answers 415 in the Anthropic shape', async () => {
    const r = await post(ANTHROPIC, ok, { 'content-type': 'text/plain' });
    expect(r.status).toBe(415);
    expect(r.json.type).toBe('error');
  });

  it('accepts a missing content type and JSON with parameters', async () => {
    // A Buffer body: fetch would label a string text/plain on its own.
    expect((await post(OPENAI, Buffer.from(ok), {})).status).toBe(200);
    expect((await post(OPENAI, ok, { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
  });
});

describe('an upstream 200 that is not JSON', () => {
  it.each([
    [OPENAI, 'server_error'],
    [ANTHROPIC, 'api_error'],
  ])('%s answers 502 in the dialect shape', async (path, type) => {
    upstream.setScript(() => ({
      kind: 'raw',
      status: 200,
      body: '<html>upstream proxy page</html>',
      headers: { 'content-type': 'text/html' },
    }));
    try {
      const body = JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
      const r = await post(path, body);
      expect(r.status).toBe(502);
      expect(r.text).not.toContain('<html>');
      expect(JSON.stringify(r.json)).toContain(type);
    } finally {
      upstream.setScript(jsonScript({ expand: false }));
    }
  });
});

describe('a provider that stops sending mid-stream', () => {
  // Headers and one event, then silence: the gateway must end the client stream and hang up.
  async function stallingProvider() {
    let closed!: () => void;
    const upstreamClosed = new Promise<void>((r) => (closed = r));
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          req.url!.includes('/messages')
            ? 'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":1,"output_tokens":0}}}\n\n'
            : 'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n',
        );
        res.on('close', closed);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      upstreamClosed,
      close: () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    };
  }

  it.each([
    [
      ANTHROPIC,
      /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"context-guru: upstream sent nothing for 300 ms"\}\}\n\n$/,
    ],
    [
      OPENAI,
      /\n\ndata: \{"error":\{"message":"context-guru: upstream sent nothing for 300 ms","type":"server_error","code":"upstream_idle_timeout"\}\}\n\n$/,
    ],
  ])('%s ends the client stream with the dialect error event and cancels upstream', async (path, tail) => {
    const provider = await stallingProvider();
    const gw = await startGateway(provider.url, { PRESET: 'agent', UPSTREAM_IDLE_TIMEOUT_MS: '300' });
    try {
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text.startsWith(path === ANTHROPIC ? 'event: message_start' : 'data: {"id":"c1"')).toBe(true);
      expect(text).toMatch(tail);
      await provider.upstreamClosed;
    } finally {
      await gw.close();
      await provider.close();
    }
  });

  it('cuts a non-streaming JSON body that stalls after its headers went out, and hangs up upstream', async () => {
    let closed!: () => void;
    const upstreamClosed = new Promise<void>((r) => (closed = r));
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id":"x",');
        res.on('close', closed);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const gw = await startGateway(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
      PRESET: 'agent',
      UPSTREAM_IDLE_TIMEOUT_MS: '300',
    });
    try {
      const res = await fetch(`${gw.url}${OPENAI}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
      await upstreamClosed;
    } finally {
      await gw.close();
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('/expand errors', () => {
  it.each([
    ['?id=not%20a%20hash', 400, 'expand_bad_id'],
    ['?id=0123456789abcdef&session=s1', 404, 'expand_not_found'],
  ])('%s answers %i in the same error shape as every other gateway error', async (query, status, code) => {
    const res = await fetch(`${gateway.url}/expand${query}`);
    expect(res.status).toBe(status);
    const body = (await res.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error.code).toBe(code);
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/^context-guru: /);
  });
});
