// store: true and previous_response_id through the gateway against a provider that really stores:
// each response is kept with its whole history (the chain it continued, its input, its output),
// a request continuing an unknown response is a 404, and one whose history leaves a call
// unanswered or answers one twice is a 400, as the Responses API does. A Codex-like client sends
// only the new function_call_output each turn and chains on the id it was given. The gateway
// compresses those outputs, the model redeems markers in-band, and the chain never breaks: the id
// the client gets is the response whose stored history holds the expand call and its answer, and
// nothing is re-inserted into a body whose history the provider holds. Whole and streamed, with the
// client chaining on the id it was given last (response.completed, the JSON id) or first
// (response.created; without a stream, the answer's first stored round, as a client that listed
// its stored responses would): the gateway forwards a first round's id as the last round's.
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { callItem, reasoningItem, responseJson, responseSse, responsesTurn, textItem } from '../support/responses-fixtures';
import { sha } from '../support/scripted-model';
import { agentSteps } from '../support/transcripts';

jest.setTimeout(60_000);

type Item = Record<string, unknown>;
const EXPAND = 'context_guru_expand';
const MARKER = /<<cg:([0-9a-f]{16})>>/;
const steps = agentSteps(5, 91);
/**
 * What read_file `n` returns in session `s`: a long JSON list, which the mcp preset's smartcrush
 * offloads even as the newest output (per session: an original once expanded is kept verbatim).
 */
const listing = (s: string, n: number) =>
  JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ id: n * 100 + i, path: `${s}/file_${n}_${i}.ts`, lines: 10 + i, status: 'ok' })));

let upstream: FakeUpstream;
let gateway: GatewayHarness;
const stored = new Map<string, Item[]>();
const refused: string[] = [];
/** Every response id the provider issued, in order. */
const issued: string[] = [];

/** The next move of the model over the whole history: redeem a marker of the new input, read the next file, or stop. */
function answer(history: Item[], fresh: Item[], n: number): Item[] {
  const last = history.at(-1);
  const redeemed = last?.type === 'function_call_output' && history.some((it) => it.name === EXPAND && it.call_id === last.call_id);
  const marker = fresh.map((it) => (typeof it.output === 'string' ? MARKER.exec(it.output)?.[1] : undefined)).find(Boolean);
  const reads = history.filter((it) => it.type === 'function_call' && it.name === 'read_file').length;
  const next = reads < steps.length ? [callItem(`fc_${reads}`, `call_r${reads}`, 'read_file', '{"arg":"next"}')] : [];
  if (redeemed) return [textItem(`msg_${n}`, `expanded sha256=${sha(String(last.output))}`), ...next];
  if (marker) return [reasoningItem(n), callItem(`fc_x${n}`, `call_x${n}`, EXPAND, JSON.stringify({ id: marker }))];
  return next.length ? [reasoningItem(n), ...next] : [textItem(`msg_${n}`, 'all files read')];
}

function provider(req: RecordedRequest): ScriptedReply {
  const prev = req.body.previous_response_id;
  const chain = typeof prev === 'string' ? stored.get(prev) : [];
  if (!chain) return { kind: 'json', status: 404, body: { error: { message: `Previous response with id '${String(prev)}' not found.` } } };
  const fresh = (req.body.input ?? []) as Item[];
  const history = [...chain, ...fresh];
  const problems = validateProviderShape('responses', { ...req.body, input: history, previous_response_id: undefined });
  if (problems.length) {
    refused.push(problems.join('; '));
    return { kind: 'json', status: 400, body: { error: { message: problems.join('; '), type: 'invalid_request_error' } } };
  }
  const id = `resp_${stored.size + 1}`;
  issued.push(id);
  const output = answer(history, fresh, stored.size + 1);
  // Calls are stored answered-or-not: the next request must answer them.
  stored.set(id, [...history, ...output]);
  const usage = { input_tokens: 300, cached: 100, output_tokens: 20 };
  return req.body.stream === true
    ? { kind: 'sse', events: [responseSse(id, output, usage)] }
    : { kind: 'json', body: responseJson(id, output, usage) };
}

beforeAll(async () => {
  upstream = await startFakeUpstream(provider);
  gateway = await startGateway(upstream.url, { PRESET: 'mcp' });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

type Got = { id: string; output: Item[]; created?: string };

/** The response the client got: the JSON body, or the stream's response.completed (and response.created's id). */
function responseOf(text: string, stream: boolean): Got {
  if (!stream) return JSON.parse(text) as Got;
  const events = text
    .split('\n\n')
    .filter((b) => b.includes('data: '))
    .map((b) => JSON.parse(b.slice(b.indexOf('data: ') + 6)) as { type: string; response?: { id: string; output: Item[] } });
  const done = events.find((e) => e.type === 'response.completed')?.response;
  if (!done) throw new Error('no response.completed');
  return { ...done, created: events.find((e) => e.type === 'response.created')?.response?.id };
}

describe.each([
  [false, 'last'],
  [true, 'last'],
  [false, 'first'],
  [true, 'first'],
] as const)('a store:true chain through the gateway (stream %s, chaining on the %s id)', (stream, on) => {
  it('compresses each new output, redeems markers in-band and never breaks the chain', async () => {
    const upstreamAt = upstream.requests.length;
    const finals: string[] = [];
    let renamed = 0;
    const first = responsesTurn(steps, 0, { store: true, stream, prompt_cache_key: `stored-${stream}-${on}` });
    let body: Item = first;
    let turns = 0;
    let expandsSeen = 0;
    for (;;) {
      const issuedAt = issued.length;
      const res = await fetch(`${gateway.url}/openai/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-caller' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      expect([res.status, text.slice(0, 200)]).toEqual([200, expect.any(String)]);
      turns++;
      const got = responseOf(text, stream);
      // The stream opens with the first round's response, the answer ends with the last round's.
      const firstId = issued[issuedAt];
      if (stream) expect(got.created).toBe(firstId);
      expect(got.id).toBe(issued.at(-1));
      finals.push(got.id);
      if (firstId !== got.id) renamed++;
      expect(got.output.some((it) => it.name === EXPAND)).toBe(false);
      if (got.output.some((it) => it.type === 'message' && String(JSON.stringify(it)).includes('expanded sha256='))) expandsSeen++;
      const call = got.output.find((it) => it.type === 'function_call');
      if (!call) break;
      body = {
        ...first,
        input: [
          {
            type: 'function_call_output',
            call_id: call.call_id,
            output: listing(`${stream}-${on}`, Number(String(call.call_id).slice('call_r'.length))),
          },
        ],
        previous_response_id: on === 'last' ? got.id : firstId,
      };
    }
    const sent = upstream.requests.slice(upstreamAt);
    expect(refused).toEqual([]);
    expect(turns).toBe(steps.length + 1);
    // Expand rounds happened (more upstream requests than client turns), each one proved by the model.
    expect(sent.length - turns).toBeGreaterThan(0);
    expect(expandsSeen).toBe(sent.length - turns);
    expect(renamed).toBeGreaterThan(0);
    // Each client turn continues the previous answer's last stored response, whichever id it named.
    const clientTurns = sent.filter((r) => !(r.body.input as Item[]).some((it) => it.name === EXPAND));
    expect(clientTurns.map((r) => r.body.previous_response_id)).toEqual([undefined, ...finals.slice(0, -1)]);
    for (const r of sent.slice(1)) {
      expect(validateProviderShape('responses', r.body)).toEqual([]);
      // A continuation carries the expand call it answers; a client's turn carries only its own output.
      const input = r.body.input as Item[];
      const continuation = input.some((it) => it.name === EXPAND);
      expect(input.filter((it) => it.type === 'function_call_output')).toHaveLength(continuation ? 2 : 1);
    }
  });
});
