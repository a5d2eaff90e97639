// The in-band expand answers only what the requesting session owns, as GET /expand does: a model
// in session B naming a marker id that session A stashed gets the "unavailable" answer, and A's
// original reaches neither B's model nor B's client (issue 29).
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { markerIdOf } from '../support/forwarded-bytes';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { openaiJson } from '../support/scripted-model';
import { agentSteps, openaiTurn, type AgentStep } from '../support/transcripts';

const CONFIG = 'pipeline: [mask]\ncomponents:\n  mask: { keep_recent: 2 }\n';
const CANARY = 'CUSTOMER_SSN=078-05-1120-canary-29a';
const EXPAND = 'context_guru_expand';

let upstream: FakeUpstream;
let gateway: GatewayHarness;
/** The id the model of the next request asks for, in-band; undefined: it just answers. */
let askFor: string | undefined;

interface Msg {
  role: string;
  content?: unknown;
  tool_call_id?: string;
}

/** Asks for `askFor` once; on the continuation echoes the expand result so a leak reaches the client. */
function script(req: RecordedRequest): ScriptedReply {
  const messages = req.body.messages as Msg[];
  const last = messages[messages.length - 1]!;
  if (last.role === 'tool' && last.tool_call_id === 'call_cross') return openaiJson(`got: ${String(last.content)}`);
  if (askFor) return openaiJson('', { id: 'call_cross', name: EXPAND, args: JSON.stringify({ id: askFor }) });
  return openaiJson('ok');
}

function withCanary(steps: AgentStep[]): AgentStep[] {
  const secret = `${CANARY}\n${'log line of the service, nothing to see\n'.repeat(60)}`;
  return steps.map((s, i) => (i === 0 ? { ...s, tool: 'bash', args: { command: 'cat .env' }, output: secret } : s));
}

async function turn(session: string, steps: AgentStep[]): Promise<string> {
  const res = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x', 'x-context-guru-session': session },
    body: JSON.stringify(openaiTurn(steps, 6)),
  });
  expect(res.status).toBe(200);
  return res.text();
}

beforeAll(async () => {
  upstream = await startFakeUpstream(script);
  gateway = await startGateway(upstream.url, { CONFIG });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

describe('in-band expand ownership', () => {
  const stepsA = withCanary(agentSteps(8, 71));
  const stepsB = agentSteps(8, 72);
  /** A's marker id for the canary (keyed: computed with the gateway's key ring). */
  let canaryId = '';

  it("session B's model naming session A's marker gets 'unavailable'", async () => {
    askFor = undefined;
    canaryId = await markerIdOf(gateway.gw.keys, stepsA[0]!.output);
    await turn('owner-a', stepsA);
    // A's forwarded body carried the canary's marker: the id is real and stashed.
    expect(upstream.requests[upstream.requests.length - 1]!.raw).toContain(`<<cg:${canaryId}>>`);
    await turn('owner-b', stepsB);
    expect(upstream.requests[upstream.requests.length - 1]!.raw).toContain(EXPAND);

    askFor = canaryId;
    const before = upstream.requests.length;
    const answer = await turn('owner-b', stepsB);
    const continuation = upstream.requests.slice(before).map((r) => r.raw);
    expect(continuation).toHaveLength(2);
    expect(continuation[1]).toContain(`original for id ${canaryId} is no longer available`);
    expect(continuation.join('')).not.toContain(CANARY);
    expect(answer).not.toContain(CANARY);
  });

  it('the owning session still expands its own marker in-band', async () => {
    askFor = canaryId;
    const before = upstream.requests.length;
    const answer = await turn('owner-a', stepsA);
    expect(upstream.requests.slice(before)).toHaveLength(2);
    expect(answer).toContain(CANARY);
  });
});
