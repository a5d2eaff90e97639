// The Gemini routes through the real gateway (preset agent) against a recording provider: a
// Gemini-CLI-shaped session over several turns, whole (`:generateContent`) and streamed
// (`:streamGenerateContent?alt=sse`). What must hold: every body sent upstream passes the Gemini
// shape validator; thought parts, thought signatures, unknown fields and generationConfig arrive
// byte-identical; function responses are what gets compressed; the expand tool is a function
// declaration appended last, offered from the first turn on and never changing a byte; every
// forwarded content of one turn is forwarded byte-identical on the next (no cache bust). The API key
// goes upstream as sent (header or query); the other Gemini paths pass through.
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { GEMINI_MODEL, geminiJson, geminiSse, geminiTurn, modelStep } from '../support/gemini-fixtures';
import { agentSteps } from '../support/transcripts';
import { plannedFrom } from '../support/planned-rewrite';

jest.setTimeout(60_000);

let upstream: FakeUpstream;
let gateway: GatewayHarness;
const steps = agentSteps(6, 31);
const ANSWER = [{ text: 'Looking', thoughtSignature: 'c2ln' }, { text: ' good.' }];

function reply(req: RecordedRequest): ScriptedReply {
  if (req.path.includes(':countTokens')) return { kind: 'json', body: { totalTokens: 42, path: req.path } };
  if (!req.path.includes(':generateContent') && !req.path.includes(':streamGenerateContent'))
    return { kind: 'json', body: { models: [{ name: `models/${GEMINI_MODEL}` }], path: req.path } };
  if (req.path.includes(':streamGenerateContent')) return { kind: 'sse', events: [geminiSse(ANSWER)] };
  return { kind: 'json', body: geminiJson(ANSWER) };
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
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; rewrite: string | null }> {
  const res = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': 'AIza-test', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), rewrite: res.headers.get('x-context-guru-rewrite') };
}

/** The raw bytes of each content of a forwarded body, in order (the fixtures are compact JSON). */
const contentTexts = (raw: string): string[] => (JSON.parse(raw) as { contents: unknown[] }).contents.map((c) => JSON.stringify(c));

describe('POST /gemini/v1beta/models/{model}:generateContent and :streamGenerateContent', () => {
  it.each([false, true])('a Gemini-CLI-shaped session (stream %s): lossless, compressed, valid, stable turn to turn', async (stream) => {
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const session = `gemini-session-${stream ? 's' : 'j'}`;
    const forwarded: string[] = [];
    /** Per turn, the first content a planned rewrite announced it changes (docs/cache.md), if any. */
    const planned: Array<number | undefined> = [];
    for (let turn = 1; turn <= steps.length; turn++) {
      const body = geminiTurn(steps, turn);
      const res = await post(`/gemini/v1beta/models/${GEMINI_MODEL}:${method}`, body, { 'x-context-guru-session': session });
      expect(res.status).toBe(200);
      planned.push(plannedFrom(res.rewrite));
      // No expand call in the answer: the client gets the provider's bytes as they came.
      if (stream) expect(res.text).toBe(geminiSse(ANSWER));
      else expect(JSON.parse(res.text)).toEqual(geminiJson(ANSWER));
      const sent = upstream.requests.at(-1)!;
      expect(sent.path).toBe(`/v1beta/models/${GEMINI_MODEL}:${method}`);
      expect(sent.headers['x-goog-api-key']).toBe('AIza-test');
      expect(validateProviderShape('gemini', sent.body)).toEqual([]);
      // Model contents (thoughts and signatures), unknown fields, config: byte-identical.
      for (let i = 0; i < turn; i++) expect(sent.raw).toContain(JSON.stringify(modelStep(steps[i]!, i)));
      expect(sent.raw).toContain(JSON.stringify(body.generationConfig));
      expect(sent.raw).toContain('"futureField":{"kept":[1,{"nested":true}]}');
      expect(sent.raw).toContain(JSON.stringify(body.systemInstruction));
      // The expand tool: a declaration appended last, the same bytes every turn.
      const tools = sent.body.tools as Array<{ functionDeclarations: Array<{ name: string }> }>;
      expect(tools).toHaveLength(1);
      expect(tools[0]!.functionDeclarations.map((d) => d.name)).toEqual(['read_file', 'bash', 'http_get', 'context_guru_expand']);
      forwarded.push(sent.raw);
    }
    const last = JSON.parse(forwarded.at(-1)!) as {
      contents: Array<{ parts: Array<{ functionResponse?: { response: { output: string } } }> }>;
    };
    const outputs = last.contents.flatMap((c) => c.parts.flatMap((p) => (p.functionResponse ? [p.functionResponse.response.output] : [])));
    expect(outputs.filter((o, k) => o !== steps[k]!.output).length).toBeGreaterThan(0);
    expect(forwarded.at(-1)).toMatch(/<<cg:[A-Za-z0-9_-]+>>/);
    expect(forwarded.at(-1)!.length).toBeLessThan(JSON.stringify(geminiTurn(steps, steps.length)).length);
    // No forwarded content changes a byte from one turn to the next (but from where a planned
    // rewrite said it would), the tools neither.
    for (let t = 1; t < forwarded.length; t++) {
      const prev = contentTexts(forwarded[t - 1]!).slice(0, planned[t]);
      expect(contentTexts(forwarded[t]!).slice(0, prev.length)).toEqual(prev);
      expect(JSON.stringify((JSON.parse(forwarded[t]!) as { tools: unknown }).tools)).toBe(
        JSON.stringify((JSON.parse(forwarded[t - 1]!) as { tools: unknown }).tools),
      );
    }
  });

  it('the key given as ?key= goes upstream in the query; under /t/<key>/ the tenant path is taken off', async () => {
    const res = await post(`/t/cg_live_unknown/gemini/v1beta/models/${GEMINI_MODEL}:generateContent?key=AIza-q`, geminiTurn(steps, 1));
    // An unknown tenant key is refused in Google's error shape; nothing is forwarded for it.
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    const ok = await post(`/gemini/v1beta/models/${GEMINI_MODEL}:generateContent?key=AIza-q`, geminiTurn(steps, 1), {});
    expect(ok.status).toBe(200);
    expect(upstream.requests.at(-1)!.path).toBe(`/v1beta/models/${GEMINI_MODEL}:generateContent?key=AIza-q`);
  });

  it('a body that is not a generateContent request is refused in Google error shape', async () => {
    const res = await post(`/gemini/v1beta/models/${GEMINI_MODEL}:generateContent`, { contents: 'hello' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({
      error: { code: 400, status: 'INVALID_ARGUMENT', details: [{ reason: 'invalid_request', domain: 'context-guru' }] },
    });
    const broken = await post(`/gemini/v1beta/models/${GEMINI_MODEL}:generateContent`, '{"contents": [');
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.text)).toMatchObject({ error: { status: 'INVALID_ARGUMENT', details: [{ reason: 'malformed_json' }] } });
  });
});

describe('the other Gemini paths', () => {
  it.each([
    ['POST', `/gemini/v1beta/models/${GEMINI_MODEL}:countTokens`, '{"contents":[{"parts":[{"text":"hi"}]}],  "x":1}'],
    ['GET', '/gemini/v1beta/models?pageSize=5', undefined],
  ])('%s %s passes through as received', async (method, path, body) => {
    const res = await fetch(`${gateway.url}${path}`, {
      method,
      body,
      headers: { 'x-goog-api-key': 'AIza-test', ...(body ? { 'content-type': 'application/json' } : {}) },
    });
    expect(res.status).toBe(200);
    const sent = upstream.requests.at(-1)!;
    expect([sent.method, sent.path]).toEqual([method, path.slice('/gemini'.length)]);
    expect(sent.headers['x-goog-api-key']).toBe('AIza-test');
    if (body) expect(sent.raw).toBe(body);
  });
});
