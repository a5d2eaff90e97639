// The expand loop on the Responses route, whole and streamed: the scripted model redeems the first
// marker it sees with a context_guru_expand function_call (after a reasoning item), the gateway
// answers it upstream and the client gets one response without the call — the model's proof
// (the SHA-256 of the original it was given) as its text, usage summed over both rounds, and, on
// a stream, one response.created, consecutive output_index values and one sequence_number run.
// The continuation carries the first round's reasoning item byte-identical and passes the shape
// validator.
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { callItem, reasoningItem, responseJson, responseSse, responsesTurn, textItem } from '../support/responses-fixtures';
import { sha } from '../support/scripted-model';
import { missingDialectFigures, scrape } from '../support/metrics-text';
import { agentSteps } from '../support/transcripts';

jest.setTimeout(60_000);

const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/;
const steps = agentSteps(6, 31);
let upstream: FakeUpstream;
let gateway: GatewayHarness;

type Item = { type: string; name?: string; call_id?: string; output?: string };

function script(req: RecordedRequest): ScriptedReply {
  const input = (req.body.input ?? []) as Item[];
  const expandCalls = new Set(input.filter((i) => i.type === 'function_call' && i.name === 'context_guru_expand').map((i) => i.call_id));
  const result = input.find((i) => i.type === 'function_call_output' && expandCalls.has(i.call_id));
  const marker = input.map((i) => (typeof i.output === 'string' ? MARKER.exec(i.output)?.[1] : undefined)).find(Boolean);
  const usage = { input_tokens: 200, cached: 50, output_tokens: 20 };
  const output =
    result?.output !== undefined
      ? [reasoningItem(71), textItem('msg_2', `expanded sha256=${sha(result.output)}`)]
      : marker
        ? [reasoningItem(70), callItem('fc_x', 'call_expand_1', 'context_guru_expand', JSON.stringify({ id: marker }))]
        : [textItem('msg_1', 'no marker seen')];
  if (req.body.stream === true) return { kind: 'sse', events: [responseSse(`resp_${req.raw.length}`, output, usage)] };
  return { kind: 'json', body: responseJson(`resp_${req.raw.length}`, output, usage) };
}

beforeAll(async () => {
  upstream = await startFakeUpstream(script);
  gateway = await startGateway(upstream.url, { PRESET: 'agent' });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

interface Parsed {
  response: { output: Item[]; usage: { input_tokens: number; output_tokens: number; input_tokens_details: { cached_tokens: number } } };
  events: Array<{ type: string; sequence_number: number; output_index?: number }>;
}

function parse(text: string, stream: boolean): Parsed {
  if (!stream) return { response: JSON.parse(text) as Parsed['response'], events: [] };
  const events = text
    .split('\n\n')
    .filter((b) => b.includes('data: '))
    .map((b) => JSON.parse(b.slice(b.indexOf('data: ') + 6)) as Parsed['events'][number] & { response?: Parsed['response'] });
  const done = events.find((e) => e.type === 'response.completed');
  if (!done?.response) throw new Error(`no response.completed in ${text.slice(0, 300)}`);
  return { response: done.response, events };
}

describe.each([false, true])('expand on /openai/v1/responses (stream %s)', (stream) => {
  it('the model redeems a marker in-band; the client never sees the call', async () => {
    const session = `expand-${stream}`;
    let last: { text: string; upstreamAt: number } | undefined;
    // Turns until a tool output carries a marker (the agent preset offloads older outputs).
    for (let turn = 1; turn <= steps.length; turn++) {
      const upstreamAt = upstream.requests.length;
      const res = await fetch(`${gateway.url}/openai/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(responsesTurn(steps, turn, { stream, prompt_cache_key: session })),
      });
      expect(res.status).toBe(200);
      last = { text: await res.text(), upstreamAt };
      if (upstream.requests.length - upstreamAt > 1) break;
    }
    const sent = upstream.requests.slice(last!.upstreamAt);
    expect(sent).toHaveLength(2);
    for (const r of sent) expect(validateProviderShape('responses', r.body)).toEqual([]);
    // The continuation: the round's reasoning item as the provider sent it, the call, then its output.
    expect(sent[1]!.raw).toContain(JSON.stringify(reasoningItem(70)));
    const { response, events } = parse(last!.text, stream);
    const marker = (sent[0]!.body.input as Item[])
      .map((i) => (typeof i.output === 'string' ? MARKER.exec(i.output)?.[1] : undefined))
      .find(Boolean)!;
    const original = await gateway.gw.store.getStash(gateway.gw.tenants.resolve({}).id, marker);
    expect(original).not.toBeNull();
    const text = JSON.stringify(response.output);
    expect(text).toContain(`expanded sha256=${sha(original!)}`);
    expect(text).not.toContain('context_guru_expand');
    expect(response.output.map((i) => i.type)).toEqual(['reasoning', 'reasoning', 'message']);
    expect(response.usage).toMatchObject({ input_tokens: 400, output_tokens: 40, input_tokens_details: { cached_tokens: 100 } });
    if (stream) {
      expect(last!.text).not.toContain('context_guru_expand');
      expect(events.filter((e) => e.type === 'response.created')).toHaveLength(1);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      const indices = events.filter((e) => e.type === 'response.output_item.added').map((e) => e.output_index);
      expect(indices).toEqual([0, 1, 2]);
    }
  });
});

describe('the Responses dialect in the metrics', () => {
  it('upstream calls, billed usage by origin, money and saved tokens carry dialect="responses"', async () => {
    // After the expand sessions above (jest runs describes in order).
    const samples = await scrape(gateway.url);
    expect(missingDialectFigures(samples, 'responses')).toEqual([]);
  });
});
