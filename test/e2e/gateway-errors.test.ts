// The gateway error table: every code of GATEWAY_ERRORS is produced here by a real request to the
// real gateway (bad bodies, tenant auth, /compact, /expand, a provider that is away, answers
// garbage, hangs, breaks or stalls a stream, a Redis cut from under it), each answered with the
// table's status in the one error shape; docs/errors.md lists exactly those codes. A store that did
// not answer fails a chat request open as `store_unavailable` (by its code, not by its wording).
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { HotStore } from '@context-guru/components';
import { MemoryHotStore } from '@context-guru/storage';
import { GATEWAY_ERRORS, type GatewayErrorCode } from '../../apps/gateway/src/http/error-codes';
import { documentedCodes } from '../support/error-docs';
import { drainGateway } from '../../apps/gateway/src/server';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { freePort } from '../support/replicas';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

jest.setTimeout(60_000);

const OPENAI = '/openai/v1/chat/completions';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const seen = new Map<string, number>();

const chunk = 'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n';
const answer = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});

/** A provider whose behaviour is the request's model name. */
function provider(req: IncomingMessage, res: ServerResponse, body: string): void {
  const model = (JSON.parse(body) as { model: string }).model;
  if (model === 'hang') return; // no headers, ever
  if (model === 'garbage' || model === 'garbage-labelled-json') {
    const page = '<html>a proxy page</html>';
    const type = model === 'garbage' ? 'text/html' : 'application/json';
    res.writeHead(200, { 'content-type': type, 'content-length': String(page.length) }).end(page);
  } else if (model === 'stall' || model === 'break') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk);
    if (model === 'break') setTimeout(() => res.socket?.destroy(), 50);
  } else res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
}

const chat = (model: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('gateway error codes', () => {
  let upstream: ReturnType<typeof createServer>;
  let redisCut: TcpProxy;
  let main: GatewayHarness;
  let keyed: GatewayHarness;
  let lonely: GatewayHarness;
  let upstreamUrl: string;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => provider(req, res, body));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const redis = new URL(REDIS_URL);
    redisCut = await startTcpProxy(redis.hostname, Number(redis.port || 6379));
    main = await startGateway(upstreamUrl, {
      PRESET: 'agent',
      BODY_LIMIT_BYTES: '4096',
      BODY_READ_TIMEOUT_MS: '300',
      COMPACT_PRESET_OVERRIDE: 'true',
      UPSTREAM_HEADER_TIMEOUT_MS: '500',
      UPSTREAM_IDLE_TIMEOUT_MS: '300',
      REDIS_URL: `redis://127.0.0.1:${redisCut.port}`,
      REDIS_PREFIX: `cgtest:errors:${process.pid}:${Date.now()}:`,
    });
    keyed = await startGateway(upstreamUrl, { PRESET: 'agent', REQUIRE_TENANT_KEY: 'true', OPS_TOKEN: 'gateway-errors-ops-token-000' });
    // Nothing listens upstream, and the stash store breaks with a message that merely sounds like Redis.
    const broken: HotStore = new MemoryHotStore();
    broken.owns = () => Promise.reject(new Error('Redis connection lost (a plain Error: no code)'));
    lonely = await startGateway(`http://127.0.0.1:${await freePort()}`, { PRESET: 'agent', COMPACT_PER_MINUTE: '1' }, { store: broken });
  });
  afterAll(async () => {
    for (const g of [main, keyed, lonely]) await g?.close();
    await redisCut.close();
    upstream.closeAllConnections();
    await new Promise<void>((r) => upstream.close(() => r()));
  });

  /** One request; a JSON error body is checked for the shape and recorded. */
  async function call(gw: GatewayHarness, path: string, init: RequestInit = {}): Promise<{ status: number; text: string }> {
    const res = await fetch(`${gw.url}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
    });
    const text = await res.text();
    if (res.status >= 400) record(res.status, text);
    return { status: res.status, text };
  }

  function record(status: number, body: string): void {
    const json = JSON.parse(body) as { error: { message: string; type: string; code: GatewayErrorCode } };
    expect(Object.keys(json)).toEqual(['error']);
    expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'type']);
    expect(json.error.message).toMatch(/^context-guru: /);
    expect([json.error.code, status]).toEqual([json.error.code, GATEWAY_ERRORS[json.error.code].status]);
    seen.set(json.error.code, status);
  }

  /** A body that stops after its first byte: the answer the gateway gives before closing, recorded. */
  async function trickled(gw: GatewayHarness): Promise<void> {
    const answer = await new Promise<string>((resolve) => {
      const s = connect(Number(new URL(gw.url).port), '127.0.0.1');
      const got: Buffer[] = [];
      s.on('data', (c: Buffer) => got.push(c));
      s.on('close', () => resolve(Buffer.concat(got).toString()));
      s.write(`POST ${OPENAI} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{`);
    });
    const status = Number(answer.split(' ')[1]);
    record(status, answer.slice(answer.indexOf('\r\n\r\n') + 4));
  }

  /** The error event a stream ends with: OpenAI's `data: {"error": …}`. */
  function recordStreamEnd(text: string): void {
    const last = text.trimEnd().split('\n\n').pop()!;
    expect(last.startsWith('data: {"error"')).toBe(true);
    const json = JSON.parse(last.slice('data: '.length)) as { error: { code: GatewayErrorCode } };
    record(GATEWAY_ERRORS[json.error.code].status, last.slice('data: '.length));
  }

  it('bad bodies: malformed, too deep, not an object, not UTF-8, too large, not JSON', async () => {
    await call(main, OPENAI, { method: 'POST', body: '{"model":' });
    // Deeper than the gateway walks (MAX_JSON_DEPTH, 128), well inside the body limit.
    const deep = `{"model":"m","messages":[{"role":"user","content":${'['.repeat(300)}${']'.repeat(300)}}]}`;
    await call(main, OPENAI, { method: 'POST', body: deep });
    await call(main, OPENAI, { method: 'POST', body: '[]' });
    await call(main, OPENAI, {
      method: 'POST',
      body: Buffer.concat([Buffer.from('{"model":"m","messages":"'), Buffer.from([0xff]), Buffer.from('"}')]),
    });
    await call(main, OPENAI, { method: 'POST', body: chat('m', { pad: 'x'.repeat(5000) }) });
    await call(main, OPENAI, { method: 'POST', body: chat('m'), headers: { 'content-type': 'text/plain' } });
    await trickled(main);
    for (const code of [
      'malformed_json',
      'too_deep',
      'invalid_request',
      'invalid_utf8',
      'request_timeout',
      'request_too_large',
      'unsupported_media_type',
    ])
      expect([code, seen.has(code)]).toEqual([code, true]);
  });

  it('/compact, /expand and /stats', async () => {
    await call(main, '/compact?cache=sometimes', { method: 'POST', body: chat('m') });
    await call(main, '/compact?preset=thrifty', { method: 'POST', body: chat('m') });
    // No override allowed there, and one /compact a minute: the second is refused.
    await call(lonely, '/compact?preset=agent', { method: 'POST', body: chat('m') });
    await call(lonely, '/compact', { method: 'POST', body: chat('m') });
    await call(lonely, '/compact', { method: 'POST', body: chat('m') });
    await call(main, '/expand?id=not%20a%20hash');
    await call(main, '/expand?id=0123456789abcdef&session=s1');
    await call(main, '/stats?tenant=someone-else');
    await call(keyed, OPENAI, { method: 'POST', body: chat('m') });
    await call(keyed, '/metrics', { headers: { authorization: 'Bearer not-the-ops-token' } });
    // The broken store's Error names Redis, but carries no code: an internal error, not an outage.
    await call(lonely, '/expand?id=0123456789abcdef&session=s1');
    for (const code of [
      'invalid_query',
      'invalid_preset',
      'compact_preset_forbidden',
      'compact_rate_limited',
      'expand_bad_id',
      'expand_not_found',
      'tenant_forbidden',
      'tenant_auth',
      'ops_auth',
      'internal_error',
    ])
      expect([code, seen.has(code)]).toEqual([code, true]);
  });

  it('no route, or a proxy route asked with another method: 404 and 405 in the dialect of the path', async () => {
    expect((await call(main, '/v1/chat/completions', { method: 'POST', body: chat('m') })).status).toBe(404);
    // Other methods under /openai/v1/ are the provider's (stored completions, responses): relayed.
    for (const [path, method] of [
      [OPENAI, 'PUT'],
      ['/compact', 'GET'],
    ]) {
      const wrong = await fetch(`${main.url}${path}`, { method });
      expect([path, wrong.status, wrong.headers.get('allow')]).toEqual([path, 405, 'POST']);
      record(wrong.status, await wrong.text());
    }
    for (const [path, method, status, type] of [
      ['/anthropic/v1/models', 'GET', 404, 'not_found_error'],
      ['/anthropic/v1/messages', 'GET', 405, 'invalid_request_error'],
    ] as const) {
      const res = await fetch(`${main.url}${path}`, { method });
      const json = (await res.json()) as { type: string; error: { type: string; message: string } };
      expect([path, res.status, json.type, json.error.type]).toEqual([path, status, 'error', type]);
      expect(json.error.message).toMatch(/^context-guru: /);
    }
    for (const code of ['route_not_found', 'method_not_allowed']) expect([code, seen.has(code)]).toEqual([code, true]);
  });

  it('a WebSocket upgrade on the Responses route (Codex tries one first)', async () => {
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${main.url}/openai/v1/responses`, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end();
    });
    record(answer.status, answer.text);
    expect(seen.get('websocket_unsupported')).toBe(426);
  });

  it('a provider away, answering garbage, hanging, breaking or stalling a stream', async () => {
    await call(lonely, OPENAI, { method: 'POST', body: chat('m') });
    await call(main, OPENAI, { method: 'POST', body: chat('garbage') });
    // Labelled JSON, and small enough to hold: read whole and found not to be JSON, never relayed as a 200.
    seen.delete('upstream_bad_response');
    expect((await call(main, OPENAI, { method: 'POST', body: chat('garbage-labelled-json') })).status).toBe(502);
    expect(seen.get('upstream_bad_response')).toBe(502);
    await call(main, OPENAI, { method: 'POST', body: chat('hang') });
    for (const model of ['break', 'stall']) {
      const r = await call(main, OPENAI, { method: 'POST', body: chat(model, { stream: true }) });
      expect(r.status).toBe(200);
      expect(r.text.startsWith(chunk)).toBe(true);
      recordStreamEnd(r.text);
    }
    for (const code of [
      'upstream_unreachable',
      'upstream_bad_response',
      'upstream_timeout',
      'upstream_stream_failed',
      'upstream_idle_timeout',
    ])
      expect([code, seen.has(code)]).toEqual([code, true]);
  });

  it('a cloud route with no credentials for that cloud: 502 upstream_credentials, in the Anthropic shape', async () => {
    const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
    const res = await fetch(`${main.url}/bedrock/model/anthropic.claude-haiku-4-5/invoke`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    const json = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect([res.status, json.type, json.error.type]).toEqual([502, 'error', 'api_error']);
    expect(json.error.message).toMatch(/^context-guru: no Bedrock credentials/);
    // The Anthropic shape has no field for the code: the message and the status identify it.
    seen.set('upstream_credentials', res.status);
  });

  it('a stream still open when the drain deadline passes ends with gateway_draining', async () => {
    const draining = await startGateway(upstreamUrl, { PRESET: 'agent', UPSTREAM_IDLE_TIMEOUT_MS: '60000' });
    try {
      const res = await fetch(`${draining.url}${OPENAI}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chat('stall', { stream: true }),
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let text = new TextDecoder().decode((await reader.read()).value);
      const drained = drainGateway(draining.app, 100, draining.gw.log);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      await drained;
      expect(text.startsWith(chunk)).toBe(true);
      recordStreamEnd(text);
      expect(seen.get('gateway_draining')).toBe(503);
    } finally {
      await draining.close();
    }
  });

  it('Redis cut: /expand answers store_unavailable, a chat request fails open as store_unavailable', async () => {
    await redisCut.cut();
    try {
      await call(main, '/expand?id=0123456789abcdef&session=s1');
      expect(seen.get('store_unavailable')).toBe(503);
      const before = await failOpen(main, 'store_unavailable');
      const r = await call(main, OPENAI, { method: 'POST', body: chat('m') });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text)).toEqual(JSON.parse(answer));
      expect(await failOpen(main, 'store_unavailable')).toBe(before + 1);
    } finally {
      await redisCut.restore();
    }
  });

  it('produced every code of the table, and docs/errors.md lists exactly those codes with their status', () => {
    expect([...seen.keys()].sort()).toEqual(Object.keys(GATEWAY_ERRORS).sort());
    expect(documentedCodes('Gateway')).toEqual(Object.entries(GATEWAY_ERRORS).map(([code, d]) => ({ code, status: d.status })));
  });
});

async function failOpen(gw: GatewayHarness, reason: string): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`cg_fail_open_total{`) && l.includes(`reason="${reason}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}
