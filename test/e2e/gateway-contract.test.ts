// The wire contract of SPEC §3 as a client sees it: precise errors in the dialect's shape, header
// policy, byte-identity of what the pipeline did not change, and the ops routes.
import { createServer } from 'node:net';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { jsonScript } from '../support/scripted-model';
import { agentSteps, openaiTurn } from '../support/transcripts';

let upstream: FakeUpstream;
let gateway: GatewayHarness;

beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  gateway = await startGateway(upstream.url, { PRESET: 'agent', BODY_LIMIT_BYTES: '200000', COMPACT_PRESET_OVERRIDE: 'true' });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

describe('gateway-made errors', () => {
  it('answers malformed JSON with 400 naming the position, in the OpenAI error shape', async () => {
    const res = await post('/openai/v1/chat/completions', '{"model":"m","messages":[{"role":"user","content":"hi"},]}');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; type: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/position \d+/);
    expect(body.error.message).toMatch(/line 1, column \d+/);
  });

  it('answers malformed JSON in the Anthropic error shape on the Anthropic route', async () => {
    const res = await post('/anthropic/v1/messages', '{"model": "m", "messages": [');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/position \d+/);
  });

  it('answers an empty body with 400, never forwarding it', async () => {
    const before = upstream.requests.length;
    const res = await post('/openai/v1/chat/completions', '');
    expect(res.status).toBe(400);
    expect(upstream.requests.length).toBe(before);
  });

  it('rejects a body whose messages is not an array', async () => {
    const res = await post('/openai/v1/chat/completions', '{"model":"m","messages":{}}');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/messages/);
  });

  it('answers a body over the limit with 413', async () => {
    const big = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(250_000) }] });
    const res = await post('/openai/v1/chat/completions', big);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/200000 byte limit/);
  });

  it('answers a dead upstream with 502 and never leaks its address', async () => {
    const port = await freePort();
    const dead = await startGateway(`http://127.0.0.1:${port}`, { PRESET: 'agent' });
    try {
      const res = await fetch(`${dead.url}/anthropic/v1/messages`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(502);
      const text = await res.text();
      expect(text).not.toContain(String(port));
      expect(JSON.parse(text).error.type).toBe('api_error');
      // And it keeps serving.
      expect((await fetch(`${dead.url}/healthz`)).status).toBe(200);
    } finally {
      await dead.close();
    }
  });

  it('answers an upstream that never sends headers with 504', async () => {
    const slow = await startGateway(upstream.url, { PRESET: 'agent', UPSTREAM_HEADER_TIMEOUT_MS: '300' });
    upstream.setScript(() => ({ kind: 'hang' }));
    try {
      const res = await fetch(`${slow.url}/openai/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(504);
    } finally {
      upstream.setScript(jsonScript({ expand: false }));
      await slow.close();
    }
  });

  it('relays upstream errors verbatim', async () => {
    const errorBody =
      '{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}';
    upstream.setScript(() => ({ kind: 'raw', status: 429, body: errorBody, headers: { 'retry-after': '7' } }));
    try {
      const res = await post('/openai/v1/chat/completions', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('7');
      expect(await res.text()).toBe(errorBody);
    } finally {
      upstream.setScript(jsonScript({ expand: false }));
    }
  });
});

describe('failing open', () => {
  it('forwards the received bytes when decoding breaks on our side', async () => {
    const turns = gateway.gw.turns;
    (gateway.gw as { turns: unknown }).turns = {
      text: () => {
        throw new Error('a bug in the body decoding');
      },
      decode: () => {
        throw new Error('a bug in the decoder');
      },
    };
    try {
      const raw = JSON.stringify(openaiTurn(agentSteps(12, 4), 12));
      upstream.requests.length = 0;
      const res = await post('/openai/v1/chat/completions', raw, { 'x-context-guru-session': 'fail-open' });
      expect(res.status).toBe(200);
      expect(upstream.requests[0]!.raw).toBe(raw);
    } finally {
      (gateway.gw as { turns: unknown }).turns = turns;
    }
  });
});

describe('what reaches the provider', () => {
  it('strips x-context-guru-* and Cookie, passes the caller credential', async () => {
    upstream.requests.length = 0;
    await post('/openai/v1/chat/completions', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }), {
      authorization: 'Bearer sk-caller',
      cookie: 'session=secret',
      'x-context-guru-session': 'hdr-test',
      'x-context-guru-anything': 'no',
    });
    const h = upstream.requests[0]!.headers;
    expect(h.authorization).toBe('Bearer sk-caller');
    expect(h.cookie).toBeUndefined();
    expect(Object.keys(h).filter((k) => k.startsWith('x-context-guru-'))).toEqual([]);
  });

  it('keeps every untouched byte identical, 64-bit integers and unknown fields included', async () => {
    const steps = agentSteps(12, 4);
    const base = JSON.stringify(openaiTurn(steps, 12));
    const raw = `{"seed": 12345678901234567890, "x_unknown":{"nested":[1.0,2e10,"\\u00e9"]},${base.slice(1)}`;
    upstream.requests.length = 0;
    const res = await post('/openai/v1/chat/completions', raw, { 'x-context-guru-session': 'bytes' });
    expect(res.status).toBe(200);
    const sent = upstream.requests[0]!.raw;
    expect(sent.startsWith('{"seed": 12345678901234567890, "x_unknown":{"nested":[1.0,2e10,"\\u00e9"]},')).toBe(true);
    // The system and first user message are untouched and keep their exact bytes.
    const head = base.slice(1, base.indexOf('"role":"assistant"'));
    expect(sent).toContain(head);
  });

  it('forwards a bypassed request byte-identical', async () => {
    const raw = JSON.stringify(openaiTurn(agentSteps(12, 4), 12));
    upstream.requests.length = 0;
    await post('/openai/v1/chat/completions', raw, { 'x-context-guru-bypass': 'TRUE' });
    expect(upstream.requests[0]!.raw).toBe(raw);
  });
});

describe('ops routes', () => {
  it('healthz, readyz, stats and metrics answer', async () => {
    expect(await (await fetch(`${gateway.url}/healthz`)).text()).toBe('ok');
    const ready = (await (await fetch(`${gateway.url}/readyz`)).json()) as { ready: boolean; config: Array<{ pipeline: string[] }> };
    expect(ready.ready).toBe(true);
    expect(ready.config[0]!.pipeline).toEqual(['format', 'dedup', 'failed_run', 'mask', 'extract', 'cacheinject']);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toContain('cg_component_gate_declines_total{component="mask",gate="cached_prefix"}');
    expect(metrics).toMatch(/cg_requests_total\{route="openai",outcome="ok",tenant="default"\} \d+/);
    expect(metrics).toContain('cg_upstream_duration_seconds_bucket');
    const stats = (await (await fetch(`${gateway.url}/stats`)).json()) as Record<string, unknown>;
    for (const key of [
      'requests',
      'tokens_before',
      'tokens_after',
      'saved_tokens',
      'savings_pct',
      'components',
      'bounces',
      'wasted_tokens',
    ]) {
      expect(stats).toHaveProperty(key);
    }
  });

  it('POST /compact runs the pipeline without calling upstream', async () => {
    const before = upstream.requests.length;
    const raw = JSON.stringify(openaiTurn(agentSteps(12, 4), 12));
    const res = await post('/compact?provider=openai&preset=agent&cache=off', raw, { 'x-context-guru-session': 'compact-1' });
    expect(res.status).toBe(200);
    const out = await res.text();
    expect(out.length).toBeLessThan(raw.length);
    expect(out).toMatch(/<<cg:[0-9a-f]{16}>>/);
    expect(upstream.requests.length).toBe(before);
    const bad = await post('/compact?preset=nope', raw);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/unknown preset "nope"/);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('store.enabled: false', () => {
  it('still compresses but emits no marker and no expand tool (nothing could resolve them)', async () => {
    const gw = await startGateway(upstream.url, { CONFIG: 'preset: agent\nstore: { enabled: false }\n' });
    try {
      const raw = JSON.stringify(openaiTurn(agentSteps(12, 4), 12));
      upstream.requests.length = 0;
      const res = await post2(gw.url, raw);
      expect(res.status).toBe(200);
      const sent = upstream.requests[0]!.raw;
      expect(sent.length).toBeLessThan(raw.length);
      expect(sent).not.toMatch(/<<cg:/);
      expect(sent).not.toContain('context_guru_expand');
      const ready = (await (await fetch(`${gw.url}/readyz`)).json()) as { store: { kind: string } };
      expect(ready.store.kind).toBe('memory-ephemeral');
    } finally {
      await gw.close();
    }
  });
});

function post2(url: string, body: string): Promise<Response> {
  return fetch(`${url}/openai/v1/chat/completions`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-context-guru-session': 'ephemeral' },
  });
}
