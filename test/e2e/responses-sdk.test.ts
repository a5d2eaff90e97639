// The official openai SDK's Responses client through the real gateway: responses.create (whole
// and with stream: true) and the responses.stream helper, the provider asking for an original
// first thing, after its reasoning and text, and beside the client's own call. The SDK parses
// every answer; it never sees a context_guru_expand call; the text proves the model got the
// byte-identical original; every body the provider receives passes the shape validator; and the
// turn after an expand beside the client's call carries that call and its output back (the trail).
import OpenAI from 'openai';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { callItem, reasoningItem, responseJson, responseSse, responsesTurn, textItem } from '../support/responses-fixtures';
import { sha } from '../support/scripted-model';
import { agentSteps } from '../support/transcripts';

jest.setTimeout(60_000);

const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/;
const PREAMBLE = 'Let me look at the full output. ';
type Mode = 'first' | 'after_text' | 'beside';
type Item = { type: string; name?: string; call_id?: string; output?: string };

let upstream: FakeUpstream;
let gateway: GatewayHarness;
let client: OpenAI;
let mode: Mode = 'after_text';
/** While finding a session's first marked turn the model expands nothing (an expanded original is never offloaded again). */
let probing = false;
let seed = 300;

function script(req: RecordedRequest): ScriptedReply {
  const input = (req.body.input ?? []) as Item[];
  const expandIds = new Set(input.filter((i) => i.name === 'context_guru_expand').map((i) => i.call_id));
  const result = input.find((i) => i.type === 'function_call_output' && expandIds.has(i.call_id));
  const marker = input.map((i) => (typeof i.output === 'string' ? MARKER.exec(i.output)?.[1] : undefined)).find(Boolean);
  const answered = input.some((i) => i.call_id === 'call_read_beside' && i.type === 'function_call_output');
  const expand = callItem('fc_exp', 'call_expand_sdk', 'context_guru_expand', JSON.stringify({ id: marker }));
  let output: Array<Record<string, unknown>>;
  if (result?.output !== undefined) output = [reasoningItem(2), textItem('msg_b', `expanded sha256=${sha(result.output)}`)];
  else if (!marker || answered || probing) output = [textItem('msg_c', 'nothing to expand')];
  else if (mode === 'first') output = [expand, reasoningItem(1)];
  else if (mode === 'after_text') output = [reasoningItem(1), textItem('msg_a', PREAMBLE), expand];
  else
    output = [reasoningItem(1), textItem('msg_a', PREAMBLE), callItem('fc_read', 'call_read_beside', 'read_file', '{"arg":"x"}'), expand];
  const usage = { input_tokens: 300, cached: 100, output_tokens: 30 };
  if (req.body.stream === true) return { kind: 'sse', events: [responseSse(`resp_${req.raw.length}`, output, usage)] };
  return { kind: 'json', body: responseJson(`resp_${req.raw.length}`, output, usage) };
}

beforeAll(async () => {
  upstream = await startFakeUpstream(script);
  gateway = await startGateway(upstream.url, { PRESET: 'agent' });
  client = new OpenAI({ apiKey: 'sk-test', baseURL: `${gateway.url}/openai/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

type Params = OpenAI.Responses.ResponseCreateParamsNonStreaming;

/** A session of its own (an original the model expanded is kept verbatim afterwards) on the turn with its first marker. */
async function markedTurn(stream: boolean): Promise<{ params: Params; session: string }> {
  const steps = agentSteps(6, seed++);
  const session = `sdk-${seed}`;
  for (let turn = 1; turn < steps.length; turn++) {
    const params = responsesTurn(steps, turn, { prompt_cache_key: session, stream: false }) as unknown as Params;
    const before = upstream.requests.length;
    probing = true;
    await client.responses.create(params).finally(() => (probing = false));
    if (MARKER.test(upstream.requests[before]!.raw))
      return { params: responsesTurn(steps, turn + 1, { prompt_cache_key: session, stream }) as unknown as Params, session };
  }
  throw new Error('no tool output was offloaded');
}

/** The text of a response's message items (the helper's finalResponse does not add output_text). */
function outputText(output: OpenAI.Responses.ResponseOutputItem[]): string {
  return output.flatMap((i) => (i.type === 'message' ? i.content.map((c) => (c.type === 'output_text' ? c.text : '')) : [])).join('');
}

function checkForwarded(from: number): void {
  const sent = upstream.requests.slice(from);
  expect(sent.length).toBeGreaterThan(0);
  for (const r of sent) expect(validateProviderShape('responses', r.body)).toEqual([]);
}

async function originalOf(from: number): Promise<string> {
  const marker = upstream.requests
    .slice(from)
    .flatMap((r) => (r.body.input as Item[]).map((i) => (typeof i.output === 'string' ? MARKER.exec(i.output)?.[1] : undefined)))
    .find(Boolean)!;
  const text = await gateway.gw.store.getStash(gateway.gw.tenants.resolve({}).id, marker);
  if (text === null) throw new Error(`marker ${marker} is not stashed`);
  return text;
}

describe.each(['first', 'after_text'] as const)('the model expands %s', (where) => {
  it('responses.create, whole: one response, no expand call, the original reached the model', async () => {
    const { params } = await markedTurn(false);
    mode = where;
    const from = upstream.requests.length;
    const res = await client.responses.create(params);
    checkForwarded(from);
    expect(upstream.requests.length - from).toBe(2);
    expect(res.output_text).toContain(`expanded sha256=${sha(await originalOf(from))}`);
    expect(JSON.stringify(res.output)).not.toContain('context_guru_expand');
    expect(res.usage).toMatchObject({ input_tokens: 600, output_tokens: 60, input_tokens_details: { cached_tokens: 200 } });
  });

  it('responses.create with stream: true: events the SDK parses, one sequence, no expand call', async () => {
    const { params } = await markedTurn(true);
    mode = where;
    const from = upstream.requests.length;
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const ev of await client.responses.create({ ...params, stream: true })) events.push(ev);
    checkForwarded(from);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(JSON.stringify(events)).not.toContain('context_guru_expand');
    const done = events.at(-1)!;
    if (done.type !== 'response.completed') throw new Error(`last event ${done.type}`);
    expect(outputText(done.response.output)).toContain(`expanded sha256=${sha(await originalOf(from))}`);
  });

  it('responses.stream helper: deltas and finalResponse without the call', async () => {
    const { params } = await markedTurn(true);
    mode = where;
    const from = upstream.requests.length;
    let deltas = '';
    const stream = client.responses.stream({ ...params, stream: true });
    stream.on('response.output_text.delta', (e) => (deltas += e.delta));
    const final = await stream.finalResponse();
    checkForwarded(from);
    const proof = `expanded sha256=${sha(await originalOf(from))}`;
    expect(outputText(final.output)).toContain(proof);
    expect(deltas).toContain(proof);
    expect(final.output.map((i) => i.type)).not.toContain('function_call');
  });
});

describe('expand beside the client own call', () => {
  it.each([false, true])(
    'stream %s: the client runs its call; its next turn carries the expand call and its output back',
    async (stream) => {
      const { params, session } = await markedTurn(stream);
      mode = 'beside';
      const from = upstream.requests.length;
      const res = stream
        ? await client.responses.stream({ ...params, stream: true }).finalResponse()
        : await client.responses.create({ ...params, stream: false });
      expect(upstream.requests.length - from).toBe(1);
      const calls = res.output.flatMap((i) => (i.type === 'function_call' ? [i.name] : []));
      expect(calls).toEqual(['read_file']);
      // The client answers its call and sends the turn on, as an agent does.
      const next = [
        ...(params.input as unknown[]),
        ...res.output,
        { type: 'function_call_output', call_id: 'call_read_beside', output: 'file text' },
      ];
      const turnAt = upstream.requests.length;
      await client.responses.create({ ...params, input: next as Params['input'], prompt_cache_key: session, stream: false });
      checkForwarded(from);
      const input = upstream.requests[turnAt]!.body.input as Item[];
      const expandAt = input.findIndex((i) => i.name === 'context_guru_expand');
      expect(expandAt).toBeGreaterThan(0);
      const output = input.find((i) => i.type === 'function_call_output' && i.call_id === 'call_expand_sdk');
      expect(output?.output).toBe(await originalOf(from));
    },
  );
});
