// POST /openai/v1/responses through the real gateway (preset agent) against a recording provider:
// a Codex-shaped session over several turns, whole and streamed. What must hold: every body sent
// upstream passes the Responses shape validator; reasoning, compaction and unknown items (and
// unknown fields) arrive byte-identical; tool outputs are what gets compressed; the expand tool is
// a flat Responses function tool, offered from the first turn on and never changing a byte; every
// forwarded item of one turn is forwarded byte-identical on the next. The other routes Codex calls
// pass through, and a WebSocket upgrade is refused at once with 426.
import { request } from 'node:http';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { reasoningItem, responseJson, responseSse, responsesTurn, textItem } from '../support/responses-fixtures';
import { agentSteps } from '../support/transcripts';
import { plannedFrom } from '../support/planned-rewrite';

jest.setTimeout(60_000);

let upstream: FakeUpstream;
let gateway: GatewayHarness;
const steps = agentSteps(6, 31);

function reply(req: RecordedRequest): ScriptedReply {
  if (req.path !== '/v1/responses') {
    return { kind: 'json', body: { object: 'list', data: [{ id: 'gpt-5-codex', object: 'model' }], path: req.path, method: req.method } };
  }
  const output = [reasoningItem(90), textItem('msg_1', 'done for now')];
  if (req.body.stream === true) return { kind: 'sse', events: [responseSse('resp_1', output)] };
  return { kind: 'json', body: responseJson('resp_1', output) };
}

beforeAll(async () => {
  upstream = await startFakeUpstream(reply);
  gateway = await startGateway(upstream.url, { PRESET: 'agent' });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

async function post(
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; rewrite: string | null }> {
  const res = await fetch(`${gateway.url}/openai/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), rewrite: res.headers.get('x-context-guru-rewrite') };
}

/** The raw bytes of each input item of a forwarded body, in order. */
function itemTexts(raw: string): string[] {
  const parsed = JSON.parse(raw) as { input: unknown[] };
  // Items are compact JSON here (the fixtures are), so re-serialising one finds its bytes unless rewritten.
  return parsed.input.map((item) => JSON.stringify(item));
}

describe('POST /openai/v1/responses', () => {
  it.each([false, true])('a Codex-shaped session (stream %s): lossless, compressed, valid, stable turn to turn', async (stream) => {
    const session = `codex-session-${stream ? 's' : 'j'}`;
    const before = upstream.requests.length;
    const forwarded: string[] = [];
    /** Per turn, the first input item a planned rewrite announced it changes, if any. */
    const planned: Array<number | undefined> = [];
    for (let turn = 1; turn <= steps.length; turn++) {
      const body = responsesTurn(steps, turn, { stream, prompt_cache_key: session });
      const raw = JSON.stringify(body);
      const res = await post(raw);
      expect(res.status).toBe(200);
      planned.push(plannedFrom(res.rewrite));
      // No expand call in the answer: the client gets the provider's events as they came.
      if (stream) expect(res.text).toBe(responseSse('resp_1', [reasoningItem(90), textItem('msg_1', 'done for now')]));
      else expect(JSON.parse(res.text)).toMatchObject({ object: 'response', status: 'completed' });
      const sent = upstream.requests.at(-1)!;
      expect(sent.path).toBe('/v1/responses');
      expect(validateProviderShape('responses', sent.body)).toEqual([]);
      // Opaque items and unknown fields: byte-identical.
      for (const item of (body.input as unknown[]).filter((i) =>
        ['reasoning', 'compaction', 'future_item_kind'].includes(String((i as { type: string }).type)),
      ))
        expect(sent.raw).toContain(JSON.stringify(item));
      expect(sent.raw).toContain('"text_unknown_field":{"kept":true}');
      expect(sent.raw).toContain('"include":["reasoning.encrypted_content"]');
      // The expand tool: flat, last, the same bytes every turn.
      const tools = sent.body.tools as Array<{ name?: string; type: string }>;
      expect(tools.at(-1)).toMatchObject({ type: 'function', name: 'context_guru_expand', strict: false });
      expect(tools.filter((t) => t.name === 'context_guru_expand')).toHaveLength(1);
      forwarded.push(sent.raw);
    }
    expect(upstream.requests.length - before).toBe(steps.length);
    // Some tool output was compressed (a marker or a shorter output), none of the opaque items.
    const last = JSON.parse(forwarded.at(-1)!) as { input: Array<{ type: string; output?: string }> };
    const original = responsesTurn(steps, steps.length).input as Array<{ type: string; output?: string }>;
    const outputs = last.input.filter((i) => i.type.endsWith('_output'));
    const shrunk = outputs.filter((o, k) => o.output !== original.filter((i) => i.type.endsWith('_output'))[k]?.output);
    expect(shrunk.length).toBeGreaterThan(0);
    expect(forwarded.at(-1)).toMatch(/<<cg:[A-Za-z0-9_-]+>>/);
    // No forwarded item changes a byte from one turn to the next, but from exactly the item a
    // planned rewrite announced (docs/cache.md).
    for (let t = 1; t < forwarded.length; t++) {
      const prev = itemTexts(forwarded[t - 1]!);
      const next = itemTexts(forwarded[t]!);
      const firstChange = prev.findIndex((item, i) => next[i] !== item);
      expect(firstChange === -1 ? undefined : firstChange).toBe(planned[t]);
    }
  });

  it('store:true with previous_response_id: only new items arrive, an output with no call in the body is still compressed', async () => {
    // Pretty-printed JSON: the agent preset's format step minifies it even as the newest output.
    const rows = Array.from({ length: 60 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ['a', 'b'], nested: { ok: i % 2 === 0 } }));
    const pretty = JSON.stringify({ rows }, null, 4);
    const body = {
      model: 'gpt-5-codex',
      store: true,
      previous_response_id: 'resp_earlier',
      input: [{ type: 'function_call_output', call_id: 'call_stored', output: pretty }],
      tools: responsesTurn(steps, 0).tools,
      prompt_cache_key: 'stored-session',
    };
    const res = await post(body);
    expect(res.status).toBe(200);
    const sent = upstream.requests.at(-1)!;
    expect(validateProviderShape('responses', sent.body)).toEqual([]);
    expect(sent.raw).toContain('"previous_response_id":"resp_earlier"');
    const output = (sent.body.input as Array<{ output: string }>)[0]!.output;
    expect(output.length).toBeLessThan(pretty.length);
  });

  it('a body that is not a Responses request is refused in the OpenAI error shape', async () => {
    const res = await post({ model: 'm', input: 42 });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: 'invalid_request' } });
  });
});

describe('the other OpenAI routes Codex calls', () => {
  it.each([
    ['GET', '/openai/v1/models', undefined],
    ['GET', '/openai/v1/responses/resp_1?include=x', undefined],
    ['POST', '/openai/v1/responses/compact', '{"model":"gpt-5-codex",  "input":[{"type":"future"}]}'],
    ['DELETE', '/openai/v1/responses/resp_1', undefined],
  ])('%s %s passes through as received', async (method, path, body) => {
    const res = await fetch(`${gateway.url}${path}`, { method, body, headers: body ? { 'content-type': 'application/json' } : {} });
    expect(res.status).toBe(200);
    const sent = upstream.requests.at(-1)!;
    expect([sent.method, sent.path]).toEqual([method, path.slice('/openai'.length)]);
    if (body) expect(sent.raw).toBe(body);
  });

  it('a WebSocket upgrade on GET /openai/v1/responses is refused with 426, nothing forwarded', async () => {
    const before = upstream.requests.length;
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${gateway.url}/openai/v1/responses`, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'openai-beta': 'responses_websockets=2026-02-06',
        },
      });
      req.on('response', (res) => {
        let t = '';
        res.on('data', (c: Buffer) => (t += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: t }));
      });
      req.on('upgrade', () => reject(new Error('the gateway accepted the upgrade')));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(426);
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'websocket_unsupported' } });
    expect(upstream.requests.length).toBe(before);
  });
});
