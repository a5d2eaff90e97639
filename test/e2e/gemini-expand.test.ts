// The expand loop on the Gemini routes, whole, streamed as SSE and streamed as a JSON array: the
// scripted model redeems the first marker it sees with a context_guru_expand functionCall (after
// a signed preamble), the gateway answers it upstream and the client gets one answer without the
// call — the preamble, then the model's proof (the SHA-256 of the original it was given), one
// finishReason and usageMetadata summed over both rounds. The continuation carries the first
// round's parts (thought signature byte-identical) and a functionResponse, and passes the shape
// validator.
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { chunkParts, GEMINI_MODEL, geminiJson, geminiSse, geminiTurn, sseChunks, USAGE } from '../support/gemini-fixtures';
import { sha } from '../support/scripted-model';
import { metricSum, missingDialectFigures, scrape } from '../support/metrics-text';
import { agentSteps } from '../support/transcripts';

jest.setTimeout(60_000);

const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/;
const steps = agentSteps(6, 31);
const PREAMBLE = { text: 'Let me see the full output.', thoughtSignature: 'U0lHTkFUVVJFLTEr/w==' };
let upstream: FakeUpstream;
let gateway: GatewayHarness;

type Part = {
  text?: string;
  functionCall?: { name: string; args?: { id?: string } };
  functionResponse?: { name: string; response: { output?: string } };
};
type Content = { role?: string; parts: Part[] };

function script(req: RecordedRequest): ScriptedReply {
  const contents = (req.body.contents ?? []) as Content[];
  const parts = contents.flatMap((c) => c.parts);
  const result = parts.find((p) => p.functionResponse?.name === 'context_guru_expand')?.functionResponse?.response.output;
  const marker = parts.map((p) => MARKER.exec(p.functionResponse?.response.output ?? '')?.[1]).find(Boolean);
  const answer =
    result !== undefined
      ? [{ text: `expanded sha256=${sha(result)}` }]
      : marker
        ? [PREAMBLE, { functionCall: { name: 'context_guru_expand', args: { id: marker } } }]
        : [{ text: 'no marker seen' }];
  if (req.path.includes(':streamGenerateContent')) return { kind: 'sse', events: [geminiSse(answer)] };
  return { kind: 'json', body: geminiJson(answer) };
}

beforeAll(async () => {
  upstream = await startFakeUpstream(script);
  gateway = await startGateway(upstream.url, { PRESET: 'agent' });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

type Form = 'json' | 'sse' | 'array';
const METHOD: Record<Form, string> = { json: 'generateContent', sse: 'streamGenerateContent?alt=sse', array: 'streamGenerateContent' };

/** The client's answer as its chunks (one for a whole answer). */
function chunksOf(text: string, form: Form): Array<Record<string, unknown>> {
  if (form === 'sse') return sseChunks(text);
  const json = JSON.parse(text) as Record<string, unknown> | Array<Record<string, unknown>>;
  return Array.isArray(json) ? json : [json];
}

describe.each(['json', 'sse', 'array'] as const)('expand on the Gemini route (%s)', (form) => {
  it('the model redeems a marker in-band; the client never sees the call', async () => {
    let last: { text: string; upstreamAt: number; type: string } | undefined;
    // Turns until a function response carries a marker (the agent preset offloads older outputs).
    for (let turn = 1; turn <= steps.length; turn++) {
      const upstreamAt = upstream.requests.length;
      const res = await fetch(`${gateway.url}/gemini/v1beta/models/${GEMINI_MODEL}:${METHOD[form]}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k', 'x-context-guru-session': `gemini-expand-${form}` },
        body: JSON.stringify(geminiTurn(steps, turn)),
      });
      expect(res.status).toBe(200);
      last = { text: await res.text(), upstreamAt, type: res.headers.get('content-type') ?? '' };
      if (upstream.requests.length - upstreamAt > 1) break;
    }
    const sent = upstream.requests.slice(last!.upstreamAt);
    expect(sent).toHaveLength(2);
    for (const r of sent) expect(validateProviderShape('gemini', r.body)).toEqual([]);
    // Asked for as a JSON array, the stream is read upstream as SSE.
    const upstreamMethod = form === 'array' ? `${METHOD.array}?alt=sse` : METHOD[form];
    expect(sent.map((r) => r.path)).toEqual([0, 1].map(() => `/v1beta/models/${GEMINI_MODEL}:${upstreamMethod}`));
    // The continuation: the round's parts (the signature byte-identical), then the function response.
    const added = (sent[1]!.body.contents as Content[]).slice((sent[0]!.body.contents as Content[]).length);
    expect(added.map((c) => c.role)).toEqual(['model', 'user']);
    expect(sent[1]!.raw).toContain(JSON.stringify(PREAMBLE));
    // …appended to the client's contents: every byte before their closing bracket is the first body's.
    const contentsEnd = sent[0]!.raw.indexOf('],"systemInstruction"');
    expect(sent[1]!.raw.slice(0, contentsEnd)).toBe(sent[0]!.raw.slice(0, contentsEnd));
    const marker = added[0]!.parts.find((p) => p.functionCall)!.functionCall!.args!.id!;
    const original = await gateway.gw.store.getStash(gateway.gw.tenants.resolve({}).id, marker);
    expect(original).not.toBeNull();
    expect(added[1]!.parts[0]!.functionResponse).toEqual({ name: 'context_guru_expand', response: { output: original } });

    expect(last!.text).not.toContain('context_guru_expand');
    expect(last!.type).toContain(form === 'sse' ? 'text/event-stream' : 'application/json');
    const chunks = chunksOf(last!.text, form);
    const parts = chunkParts(chunks);
    expect(parts.map((p) => p.text).join('')).toBe(`${PREAMBLE.text}expanded sha256=${sha(original!)}`);
    expect(parts[0]).toEqual(PREAMBLE);
    const finishes = chunks.map((c) => (c.candidates as Array<{ finishReason?: string }>)[0]?.finishReason).filter(Boolean);
    expect(finishes).toEqual(['STOP']);
    const usage = chunks.at(-1)!.usageMetadata as typeof USAGE;
    expect(usage).toMatchObject({
      promptTokenCount: 2 * USAGE.promptTokenCount,
      cachedContentTokenCount: 2 * (USAGE.cachedContentTokenCount ?? 0),
      candidatesTokenCount: 2 * USAGE.candidatesTokenCount,
    });
  });
});

describe('the Gemini dialect in the metrics', () => {
  it('upstream calls, billed usage by origin (implicit cache reads included), money and saved tokens carry dialect="gemini"', async () => {
    // After the expand sessions above (jest runs describes in order).
    const samples = await scrape(gateway.url);
    expect(missingDialectFigures(samples, 'gemini')).toEqual([]);
    // Implicit caching bills no cache write.
    expect(metricSum(samples, 'cg_usage_tokens_total', { dialect: 'gemini', kind: 'cache_write' })).toBe(0);
  });
});
