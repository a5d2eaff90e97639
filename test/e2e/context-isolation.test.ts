// Two gateways in one process (as two tests, or the embedded process beside another) share no
// request-path state: the cmdfilter ledgers, the compaction models' reply memo, the learned
// session keys and the program sandbox all belong to a gateway context. Each case runs the same
// traffic through gateway A and asserts that gateway B saw none of it.
import { startFakeModel, program, type FakeModelServer } from '../support/fake-model-server';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { jsonScript } from '../support/scripted-model';
import { PYTEST_RUN, SHOP_README } from '../support/command-outputs';
import { agentSteps, openaiTurn } from '../support/transcripts';

const ISSUES = (n: number) =>
  JSON.stringify(
    Array.from({ length: n }, (_, i) => ({ id: 1000 + i, title: `Issue ${i}: timeout in auth handler`, state: i % 3 ? 'open' : 'closed' })),
    null,
    2,
  );
const FILTER = `const lines = INPUT.split('\\n');
return lines.filter((l, i) => i < 3 || i >= lines.length - 2 || l.includes('FAILED') || l.includes('Error') || l.includes('def ')).join('\\n');`;

let upstream: FakeUpstream;
let model: FakeModelServer;
const open: GatewayHarness[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  model = await startFakeModel(() => program(FILTER));
});
afterEach(async () => {
  for (const gw of open.splice(0)) await gw.close();
});
afterAll(async () => {
  await upstream.close();
  await model.close();
});

async function twoGateways(env: Record<string, string>): Promise<[GatewayHarness, GatewayHarness]> {
  const a = await startGateway(upstream.url, env);
  open.push(a);
  const b = await startGateway(upstream.url, env);
  open.push(b);
  return [a, b];
}

/** An agent turn: each output answers a bash call running its command. */
function turn(outputs: Array<[command: string, output: string]>) {
  const messages: Array<Record<string, unknown>> = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Fix the failing test.' },
  ];
  outputs.forEach(([command, output], i) => {
    const id = `call_${i}`;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: output });
  });
  return { model: 'gpt-4o', messages, tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }] };
}

async function post(gw: GatewayHarness, body: unknown, session: string): Promise<void> {
  const res = await fetch(`${gw.url}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-caller', 'x-context-guru-session': session },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
}

async function stats(gw: GatewayHarness): Promise<Record<string, unknown>> {
  return (await (await fetch(`${gw.url}/stats`)).json()) as Record<string, unknown>;
}

describe('two gateway contexts in one process', () => {
  it('keep their own cmdfilter ledgers: what A filtered and missed is not in B’s /stats', async () => {
    const [a, b] = await twoGateways({ CONFIG: 'pipeline: [cmdfilter]\n' });
    await post(
      a,
      turn([
        ['python -m pytest -v', PYTEST_RUN],
        ['cat README.md', SHOP_README],
      ]),
      'iso-ledgers',
    );
    const seen = await stats(a);
    expect(seen.cmdfilter_filters).toMatchObject({ pytest: { acts: 1 } });
    expect(seen.cmdfilter_selector_misses).toEqual([{ selector: '# Shop service', count: 1 }]);
    const other = await stats(b);
    expect(other.cmdfilter_filters).toBeUndefined();
    expect(other.cmdfilter_selector_misses).toBeUndefined();
  });

  it('keep their own model reply memo and program sandbox: B pays for its own calls, and closing B leaves A’s sandbox running', async () => {
    const env = {
      CONFIG: 'pipeline: [extract]\ncomponents:\n  extract: { strategy: code, model: { source: config } }\n',
      CHEAP_MODEL: 'claude-haiku-4-5',
      CHEAP_MODEL_PROVIDER: 'anthropic',
      CHEAP_MODEL_BASE: model.url,
      CHEAP_MODEL_KEY: 'sk-cheap',
    };
    const [a, b] = await twoGateways(env);
    const body = openaiTurn(agentSteps(4, 23), 4);
    model.calls.length = 0;
    await post(a, body, 'iso-memo');
    const byA = model.calls.length;
    expect(byA).toBeGreaterThan(0);
    // The same session on another gateway (its own store) asks the model itself: a process-wide
    // memo would have answered it from A's replies.
    await post(b, body, 'iso-memo');
    expect(model.calls.length).toBe(2 * byA);
    // B's closing does not close A's program sandbox: A still runs programs afterwards.
    await b.close();
    open.splice(open.indexOf(b), 1);
    await post(a, openaiTurn(agentSteps(4, 29), 4), 'iso-memo-2');
    const forwarded = upstream.requests[upstream.requests.length - 1]!.body.messages as Array<{ role: string; content: unknown }>;
    expect(forwarded.filter((m) => m.role === 'tool' && String(m.content).includes('<<cg:')).length).toBeGreaterThan(0);
  });

  it('keep their own learned session keys', async () => {
    const [a, b] = await twoGateways({ CONFIG: 'pipeline: [format, mask]\ncomponents:\n  mask: { keep_recent: 1, min_tokens: 50 }\n' });
    await post(
      a,
      turn([
        ['curl /issues?page=1', ISSUES(12)],
        ['curl /issues?page=2', ISSUES(14)],
      ]),
      'iso-learned',
    );
    // format compacted the JSON, so mask asked about keys the prefetch could not know: A learned them.
    const scope = 'default\u0000default:iso-learned';
    expect(a.gw.learned.get(scope).length).toBeGreaterThan(0);
    expect(b.gw.learned.get(scope)).toEqual([]);
  });
});
