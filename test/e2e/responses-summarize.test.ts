// summarize through the real gateway on POST /openai/v1/responses: a Codex-shaped session (reasoning
// items with encrypted_content, function and custom tool calls) gets one summary item in place of
// its middle turns; the head and the client's newest keep_last items reach the provider byte for
// byte, the reasoning kept beside them included; the body passes the Responses shape validator; the
// summary is replayed byte-identically on the next turns; its marker expands to the summarized
// span. A session whose middle holds a compaction item, and a body continuing a stored response,
// keep every item as received: there is nothing the gateway could summarize them from.
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeModel, type FakeModelServer } from '../support/fake-model-server';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { responsesTurn } from '../support/responses-fixtures';
import { jsonScript } from '../support/scripted-model';
import { agentSteps } from '../support/transcripts';

jest.setTimeout(60_000);

type Item = Record<string, unknown>;
const KEEP = 3;
const SUMMARY = /=== History Summary ===/;
const MARKER = /<<cg:([0-9a-f]{16})>>/;
const steps = agentSteps(9, 81);

let model: FakeModelServer;
let upstream: FakeUpstream;
let gateway: GatewayHarness;

beforeAll(async () => {
  model = await startFakeModel(() => ({ text: '<summary>Read the parser and the client; parse() still fails on empty input.</summary>' }));
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  const summarize = { keep_last: KEEP, min_tokens: 0, resummarize_tokens: 1_000_000, model: { source: 'config' } };
  gateway = await startGateway(upstream.url, {
    CONFIG: JSON.stringify({ pipeline: ['summarize'], components: { summarize } }),
    CHEAP_MODEL: 'claude-haiku-4-5',
    CHEAP_MODEL_PROVIDER: 'anthropic',
    CHEAP_MODEL_BASE: model.url,
    CHEAP_MODEL_KEY: 'sk-cheap',
  });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await model?.close();
});

async function send(session: string, body: Item): Promise<RecordedRequest> {
  const before = upstream.requests.length;
  const res = await fetch(`${gateway.url}/openai/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-caller', 'x-context-guru-session': session },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  expect(upstream.requests).toHaveLength(before + 1);
  return upstream.requests[before]!;
}

/** Turn `t` of the session without the compaction and unknown items the fixture puts after step 0. */
function plainTurn(t: number): Item {
  const body = responsesTurn(steps, t);
  return { ...body, input: (body.input as Item[]).filter((it) => it.type !== 'compaction' && it.type !== 'future_item_kind') };
}

const itemBytes = (items: unknown[]) => items.map((it) => JSON.stringify(it));

describe('summarize on the Responses route', () => {
  it('replaces the middle turns by one summary item; head, tail and kept reasoning byte-identical; replayed', async () => {
    const summaries: string[] = [];
    for (let t = 4; t <= steps.length; t++) {
      const body = plainTurn(t);
      const sent = await send('codex-summarize', body);
      expect(validateProviderShape('responses', sent.body)).toEqual([]);
      const client = itemBytes(body.input as Item[]);
      const out = itemBytes(sent.body.input as Item[]);
      // The developer message and the task, then the summary, then the client's newest items.
      expect(out.slice(0, 2)).toEqual(client.slice(0, 2));
      expect(out[2]).toMatch(SUMMARY);
      expect(JSON.parse(out[2]!)).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text' }] });
      expect(out.length).toBeLessThan(client.length);
      const tail = out.slice(3);
      expect(tail.length).toBeGreaterThanOrEqual(KEEP);
      expect(client.slice(-tail.length)).toEqual(tail);
      expect(sent.raw.includes(`${tail.join(',')}]`)).toBe(true);
      summaries.push(out[2]!);
    }
    // One model call; every later turn replays its summary byte for byte.
    expect(model.calls.length).toBe(1);
    expect(new Set(summaries).size).toBe(1);
    const id = MARKER.exec(summaries[0]!)?.[1];
    expect(id).toBeDefined();
    const res = await fetch(`${gateway.url}/expand?id=${id!}`, { headers: { 'x-context-guru-session': 'codex-summarize' } });
    expect(res.status).toBe(200);
    // The summarized span (its messages as JSON) holds the first step's output verbatim.
    const span = await res.text();
    expect(span.includes(JSON.stringify(steps[0]!.output).slice(1, 300))).toBe(true);
  });

  it('keeps every item as received when its middle holds a compaction item or it continues a stored response', async () => {
    const cases: Array<[string, Item]> = [
      ['codex-compacted', responsesTurn(steps, steps.length)],
      ['codex-stored', { ...plainTurn(steps.length), store: true, previous_response_id: 'resp_prev' }],
    ];
    for (const [session, body] of cases) {
      const sent = await send(session, body);
      // Every item as the client sent it (the expand tool may still be offered in `tools`).
      expect(sent.raw.includes(`"input":${JSON.stringify(body.input)}`)).toBe(true);
      expect(sent.raw).not.toMatch(SUMMARY);
    }
  });
});
