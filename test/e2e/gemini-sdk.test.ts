// The official @google/genai SDK (what Gemini CLI is built on) through the real gateway:
// models.generateContent and models.generateContentStream, the provider asking for an original
// after a signed preamble. The SDK parses every answer; it never sees a context_guru_expand call
// (`functionCalls` is empty); the text proves the model got the byte-identical original; every
// body the provider receives passes the shape validator.
import { GoogleGenAI, type Content } from '@google/genai';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { GEMINI_MODEL, geminiJson, geminiSse, geminiTurn } from '../support/gemini-fixtures';
import { sha } from '../support/scripted-model';
import { agentSteps } from '../support/transcripts';

jest.setTimeout(60_000);

const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/;
const steps = agentSteps(6, 31);
const PREAMBLE = { text: 'Reading the full output first. ', thoughtSignature: 'U0RLLXNpZw==' };
let upstream: FakeUpstream;
let gateway: GatewayHarness;

type Part = { functionResponse?: { name: string; response: { output?: string } } };

function script(req: RecordedRequest): ScriptedReply {
  const parts = ((req.body.contents ?? []) as Array<{ parts: Part[] }>).flatMap((c) => c.parts);
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

function client(session: string): GoogleGenAI {
  return new GoogleGenAI({
    apiKey: 'AIza-sdk-test',
    httpOptions: { baseUrl: `${gateway.url}/gemini`, apiVersion: 'v1beta', headers: { 'x-context-guru-session': session } },
  });
}

/** The SDK's request of turn `n`: the fixture's contents, system instruction and tools. */
function request(n: number) {
  const body = geminiTurn(steps, n);
  return {
    model: GEMINI_MODEL,
    contents: body.contents as Content[],
    config: { systemInstruction: 'You are a careful coding agent.', tools: body.tools as never },
  };
}

describe.each([false, true])('@google/genai through the gateway (stream %s)', (stream) => {
  it('gets one answer without the expand call; the model saw the original', async () => {
    const ai = client(`sdk-${stream}`);
    let text = '';
    let calls = 0;
    let upstreamAt = 0;
    for (let turn = 1; turn <= steps.length; turn++) {
      upstreamAt = upstream.requests.length;
      if (stream) {
        text = '';
        for await (const chunk of await ai.models.generateContentStream(request(turn))) {
          text += chunk.text ?? '';
          calls += chunk.functionCalls?.length ?? 0;
        }
      } else {
        const r = await ai.models.generateContent(request(turn));
        text = r.text ?? '';
        calls += r.functionCalls?.length ?? 0;
      }
      if (upstream.requests.length - upstreamAt > 1) break;
    }
    const sent = upstream.requests.slice(upstreamAt);
    expect(sent.map((r) => r.path)).toEqual(
      [0, 1].map(() => `/v1beta/models/${GEMINI_MODEL}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`),
    );
    for (const r of sent) expect(validateProviderShape('gemini', r.body)).toEqual([]);
    expect(sent[0]!.headers['x-goog-api-key']).toBe('AIza-sdk-test');
    const marker = MARKER.exec(sent[0]!.raw)![1]!;
    const original = await gateway.gw.store.getStash(gateway.gw.tenants.resolve({}).id, marker);
    expect(original).not.toBeNull();
    expect(calls).toBe(0);
    expect(text).toBe(`${PREAMBLE.text}expanded sha256=${sha(original!)}`);
  });
});
