// Ops expand of markers minted on a Responses session: a gateway serving the agent preset over the
// admin's own stores (Redis over the durable archive) compresses a Codex-shaped session's tool
// outputs — string outputs, custom tool outputs and the input_text parts of an array output — and
// an operator's POST /v1/ops/expand answers each marker with the exact text the client had sent,
// for the tenant that minted it only, on the record.
import { startAdmin, type AdminHarness } from '../../support/admin-harness';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../../support/gateway-harness';
import { responsesTurn } from '../../support/responses-fixtures';
import { jsonScript } from '../../support/scripted-model';
import { agentSteps } from '../../support/transcripts';

jest.setTimeout(60_000);

// Markers the pipeline minted (the expand tool's description names the form as `<<cg:HASH>>`).
const MARKER = /<<cg:([0-9a-f]{16})>>/g;
const steps = agentSteps(8, 61);

let h: AdminHarness;
let upstream: FakeUpstream;
let gateway: GatewayHarness;

beforeAll(async () => {
  h = await startAdmin();
  for (const id of ['default', 'other']) expect((await h.call('POST', '/v1/tenants', { body: { id, name: id } })).status).toBe(201);
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  gateway = await startGateway(upstream.url, { PRESET: 'agent' }, { store: h.store });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await h?.close();
});

/** The session's last turn with its first output as an array (text, image, text), as Codex sends screenshots. */
function lastTurn(): Record<string, unknown> {
  const body = responsesTurn(steps, steps.length);
  const input = body.input as Array<Record<string, unknown>>;
  const at = input.findIndex((it) => it.type === 'function_call_output');
  const text = String(input[at]!.output);
  input[at] = {
    ...input[at],
    output: [
      { type: 'input_text', text },
      { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
      { type: 'input_text', text: `${text}\nagain, a second time` },
    ],
  };
  return body;
}

/** Every text a tool output of the body carries, as the client sent it. */
function outputTexts(body: Record<string, unknown>): string[] {
  return (body.input as Array<Record<string, unknown>>).flatMap((it) => {
    if (it.type !== 'function_call_output' && it.type !== 'custom_tool_call_output') return [];
    const o = it.output;
    return typeof o === 'string'
      ? [o]
      : (o as Array<{ type: string; text?: string }>).filter((p) => p.type === 'input_text').map((p) => p.text!);
  });
}

describe('ops expand of a marker minted on a Responses session', () => {
  let ids: string[] = [];
  let sentTexts: string[] = [];

  beforeAll(async () => {
    let forwarded = '';
    for (let t = 2; t <= steps.length; t++) {
      const body = t === steps.length ? lastTurn() : responsesTurn(steps, t);
      const res = await fetch(`${gateway.url}/openai/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', 'x-context-guru-session': 'codex-ops' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      await res.text();
      forwarded = upstream.requests.at(-1)!.raw;
      sentTexts = outputTexts(body);
    }
    ids = [...new Set([...forwarded.matchAll(MARKER)].map((m) => m[1]!))];
  });

  it('the session minted markers, in string, custom and array outputs alike', () => {
    expect(ids.length).toBeGreaterThan(2);
    const input = (JSON.parse(upstream.requests.at(-1)!.raw) as { input: Array<Record<string, unknown>> }).input;
    const marked = input.filter((it) => JSON.stringify(it.output ?? '').includes('<<cg:'));
    expect(new Set(marked.map((it) => (Array.isArray(it.output) ? 'array' : it.type)))).toEqual(
      new Set(['function_call_output', 'custom_tool_call_output', 'array']),
    );
  });

  it('answers every marker with the exact text the client sent, and records it in the audit log', async () => {
    for (const id of ids) {
      const r = await h.call('POST', '/v1/ops/expand', { body: { tenant: 'default', id: `<<cg:${id}>>`, reason: 'codex ticket 7' } });
      expect(r.status).toBe(200);
      expect(r.json.id).toBe(id);
      // A marker stands for one whole output (or one text part): its original is one of the sent texts.
      expect(sentTexts).toContain(r.json.original);
    }
    const audit = (await h.call('GET', '/v1/audit?tenant=default&action=ops.expand')).json as Array<{ target: string }>;
    expect(audit.map((a) => a.target).sort()).toEqual([...ids].sort());
    expect((await h.call('GET', '/v1/audit/verify')).json).toMatchObject({ ok: true });
  });

  it("is not found for another tenant: a Responses session's stash is its tenant's own", async () => {
    const r = await h.call('POST', '/v1/ops/expand', { body: { tenant: 'other', id: ids[0], reason: 'wrong tenant' } });
    expect([r.status, r.json.error.code]).toEqual([404, 'not_found']);
  });
});
