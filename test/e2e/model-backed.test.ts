// Model-backed components through the real gateway: extract (strategy: code) and summarize, each
// calling a scripted compaction model over HTTP (CHEAP_MODEL*), for a multi-turn session against a
// fake provider. Every body the gateway emits passes the provider shape validator; a re-sent output
// or an unchanged history costs no second model call and keeps its bytes; the gateway's own spend
// shows up in /stats next to the savings.
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeModel, program, type FakeModelServer } from '../support/fake-model-server';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { jsonScript } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;
const FILTER = `const lines = INPUT.split('\\n');
return lines.filter((l, i) => i < 3 || i >= lines.length - 2 || l.includes('FAILED') || l.includes('Error') || l.includes('function ') || l.includes('def ')).join('\\n');`;
const SUMMARY =
  '<summary>Read the parser and HTTP client sources; pytest shows parser failures in tests/test_module_0.py. Next: fix parse().</summary>';

const steps = agentSteps(16, 23);
let model: FakeModelServer;
let upstream: FakeUpstream;

const cheapEnv = () => ({
  CHEAP_MODEL: 'claude-haiku-4-5',
  CHEAP_MODEL_PROVIDER: 'anthropic',
  CHEAP_MODEL_BASE: model.url,
  CHEAP_MODEL_KEY: 'sk-cheap',
});
const isExtractCall = (system: string) => system.includes('filter program');

beforeAll(async () => {
  model = await startFakeModel((call) => (isExtractCall(call.system) ? program(FILTER) : { text: SUMMARY }));
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
});
afterAll(async () => {
  await upstream.close();
  await model.close();
});
beforeEach(() => {
  model.calls.length = 0;
  upstream.requests.length = 0;
});

async function post(gw: GatewayHarness, path: string, body: unknown, headers: Record<string, string>): Promise<number> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

const toolTexts = (r: RecordedRequest): string[] =>
  (r.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('model-backed components through the gateway', () => {
  it('extract (code): one model call per distinct output, replayed byte-identically on every later turn', async () => {
    const gw = await startGateway(upstream.url, {
      CONFIG: 'pipeline: [extract]\ncomponents:\n  extract: { strategy: code, model: { source: config } }\n',
      ...cheapEnv(),
    });
    try {
      for (let t = 1; t <= steps.length; t++) {
        const status = await post(gw, '/openai/v1/chat/completions', openaiTurn(steps, t), {
          authorization: 'Bearer sk-caller',
          'x-context-guru-session': 'e2e-extract',
        });
        expect(status).toBe(200);
      }
      const sent = upstream.requests;
      for (const r of sent) expect(validateProviderShape('openai', r.body)).toEqual([]);
      // A tool output, once reduced, is forwarded with the same bytes on every later turn.
      for (let t = 1; t < sent.length; t++)
        expect(toolTexts(sent[t]!).slice(0, toolTexts(sent[t - 1]!).length)).toEqual(toolTexts(sent[t - 1]!));
      const reduced = toolTexts(sent[sent.length - 1]!).filter((t) => t.includes('<<cg:'));
      expect(reduced.length).toBe(steps.length);
      // Calls made: at most one per distinct output. Calls avoided: every later turn that re-sent one.
      const calls = model.calls.filter((c) => isExtractCall(c.system)).length;
      expect(calls).toBeLessThanOrEqual(new Set(steps.map((s) => s.output)).size);
      const resent = sent.slice(1).reduce(
        (n, r, t) =>
          n +
          toolTexts(r)
            .slice(0, toolTexts(sent[t]!).length)
            .filter((x) => x.includes('<<cg:')).length,
        0,
      );
      expect(resent).toBeGreaterThan(calls);
      expect(model.calls.every((c) => c.headers['x-api-key'] === 'sk-cheap' && c.body.model === 'claude-haiku-4-5')).toBe(true);
      const stats = (await (await fetch(`${gw.url}/stats`)).json()) as Record<string, unknown> & {
        components: Record<string, { gates?: Record<string, number> }>;
      };
      expect(stats.saved_tokens).toBeGreaterThan(0);
      expect(stats.llm_calls).toBe(calls);
      expect(stats.llm_input_tokens).toBe(calls * 1000);
    } finally {
      await gw.close();
    }
  });

  it('summarize: valid Anthropic bodies, a checkpoint replayed without calls, the span restored by /expand', async () => {
    const gw = await startGateway(upstream.url, {
      CONFIG:
        'pipeline: [summarize]\ncomponents:\n  summarize: { keep_last: 4, resummarize_tokens: 20000, model: { source: config }, trigger: { min_messages: 9 } }\n',
      ...cheapEnv(),
    });
    try {
      const session = { 'x-api-key': 'sk-ant-caller', 'anthropic-version': '2023-06-01', 'x-context-guru-session': 'e2e-summarize' };
      for (let t = 1; t <= steps.length; t++) expect(await post(gw, '/anthropic/v1/messages', anthropicTurn(steps, t), session)).toBe(200);
      const sent = upstream.requests;
      for (const r of sent) expect(validateProviderShape('anthropic', r.body)).toEqual([]);
      const summarized = sent.filter((r) => r.raw.includes('=== History Summary ==='));
      expect(summarized.length).toBeGreaterThan(steps.length / 2);
      // Far fewer summaries than summarized turns: the checkpoint is replayed verbatim in between.
      expect(model.calls.length).toBeGreaterThan(0);
      expect(model.calls.length).toBeLessThan(summarized.length / 2);
      const firstTurn = (r: RecordedRequest) => JSON.stringify((r.body.messages as unknown[])[0]);
      const distinct = new Set(summarized.map(firstTurn));
      expect(distinct.size).toBe(model.calls.length);
      const last = summarized[summarized.length - 1]!;
      expect(last.raw.length).toBeLessThan(JSON.stringify(anthropicTurn(steps, steps.length)).length / 2);
      const id = [...firstTurn(last).matchAll(MARKER)][0]![1]!;
      const res = await fetch(`${gw.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': 'e2e-summarize' } });
      expect(res.status).toBe(200);
      const span = JSON.parse(await res.text()) as Array<{ role: string }>;
      expect(span[0]!.role).toBe('assistant');
      const stats = (await (await fetch(`${gw.url}/stats`)).json()) as Record<string, unknown>;
      expect(stats.llm_calls).toBe(model.calls.length);
    } finally {
      await gw.close();
    }
  });

  it('summarize (incoming): spends on the caller’s own model and credential, never a gateway header', async () => {
    const gw = await startGateway(upstream.url, {
      CONFIG: 'pipeline: [summarize]\ncomponents:\n  summarize: { keep_last: 2, min_tokens: 0 }\n',
    });
    try {
      const headers = { authorization: 'Bearer sk-caller', 'x-context-guru-session': 'e2e-incoming' };
      expect(await post(gw, '/openai/v1/chat/completions', openaiTurn(steps, 6), headers)).toBe(200);
      const compaction = upstream.requests.find((r) =>
        String((r.body.messages as Array<{ content: unknown }>)[0]?.content).includes('condense the earlier part'),
      );
      expect(compaction).toBeDefined();
      expect(compaction!.body.model).toBe('gpt-fake');
      expect(compaction!.headers.authorization).toBe('Bearer sk-caller');
      expect(Object.keys(compaction!.headers).filter((h) => h.startsWith('x-context-guru-'))).toEqual([]);
      const forwarded = upstream.requests.filter((r) => r !== compaction);
      expect(forwarded).toHaveLength(1);
      expect(validateProviderShape('openai', forwarded[0]!.body)).toEqual([]);
      expect(forwarded[0]!.raw).toContain('=== History Summary ===');
    } finally {
      await gw.close();
    }
  });
});
