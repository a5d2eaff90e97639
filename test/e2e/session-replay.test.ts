// A 40-turn agent session replayed with the official SDKs through the gateway (pipeline
// [format, dedup, collapse, mask]) against a scripted model: every answer equals the answer the
// same SDK gets talking to the provider directly, every request the gateway emits passes the
// provider shape validator, markers resolve through /expand and through the model-callable tool.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { markerIdOf } from '../support/forwarded-bytes';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { jsonScript, sha } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n';
const TURNS = 40;
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;

let upstream: FakeUpstream;
let gateway: GatewayHarness;

beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  gateway = await startGateway(upstream.url, { CONFIG });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const steps = agentSteps(TURNS, 11);

describe('a 40-turn session through the gateway', () => {
  it('OpenAI: answers unchanged, valid shapes, markers resolve via /expand', async () => {
    const direct = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
    const via = new OpenAI({
      baseURL: `${gateway.url}/openai/v1`,
      apiKey: 'sk-test',
      maxRetries: 0,
      defaultHeaders: { 'x-context-guru-session': 'e2e-openai' },
    });
    upstream.requests.length = 0;
    for (let t = 1; t <= TURNS; t++) {
      const body = openaiTurn(steps, t) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
      const a = await direct.chat.completions.create(body);
      const b = await via.chat.completions.create(body);
      expect(b.choices[0]!.message.content).toBe(a.choices[0]!.message.content);
    }
    const viaGateway = upstream.requests.filter((_, i) => i % 2 === 1);
    for (const r of viaGateway) expect(validateProviderShape('openai', r.body)).toEqual([]);
    const last = viaGateway[viaGateway.length - 1]!;
    expect(last.raw.length).toBeLessThan(upstream.requests[upstream.requests.length - 2]!.raw.length);
    // Only messages carry markers; the injected tool's own description quotes the syntax.
    const ids = [...new Set([...JSON.stringify(last.body.messages).matchAll(MARKER)].map((m) => m[1]!))];
    expect(ids.length).toBeGreaterThan(5);
    // format runs first, so a JSON output is stashed in its compacted (value-identical) form.
    const originals = new Set(steps.flatMap((s) => [s.output, compactIfJson(s.output)]));
    for (const id of ids) {
      const res = await fetch(`${gateway.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': 'e2e-openai' } });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(originals.has(text)).toBe(true);
      expect(await markerIdOf(gateway.gw.keys, text)).toBe(id);
    }
    // Another session cannot read this session's originals.
    const other = await fetch(`${gateway.url}/expand?id=${ids[0]}`, { headers: { 'x-context-guru-session': 'someone-else' } });
    expect(other.status).toBe(404);
  });

  it('Anthropic: answers unchanged and valid shapes', async () => {
    const direct = new Anthropic({ baseURL: upstream.url, apiKey: 'sk-ant-test', maxRetries: 0 });
    const via = new Anthropic({
      baseURL: `${gateway.url}/anthropic`,
      apiKey: 'sk-ant-test',
      maxRetries: 0,
      defaultHeaders: { 'x-context-guru-session': 'e2e-anthropic' },
    });
    upstream.requests.length = 0;
    for (let t = 1; t <= TURNS; t++) {
      const body = anthropicTurn(steps, t) as unknown as Anthropic.MessageCreateParamsNonStreaming;
      const a = await direct.messages.create(body);
      const b = await via.messages.create(body);
      expect(b.content).toEqual(a.content);
    }
    const viaGateway = upstream.requests.filter((_, i) => i % 2 === 1);
    for (const r of viaGateway) expect(validateProviderShape('anthropic', r.body)).toEqual([]);
    expect(viaGateway.some((r) => MARKER.test(r.raw))).toBe(true);
  });

  it('the stats name the gates that declined messages', async () => {
    const stats = (await (await fetch(`${gateway.url}/stats`)).json()) as {
      components: Record<string, { runs: number; gates?: Record<string, number> }>;
      saved_tokens: number;
    };
    expect(stats.components.mask!.runs).toBeGreaterThan(0);
    expect(stats.components.mask!.gates).toHaveProperty('cached_prefix');
    expect(stats.components.mask!.gates).toHaveProperty('within_keep_recent');
    expect(stats.saved_tokens).toBeGreaterThan(0);
  });

  it('the model-callable expand tool hands the original back intact', async () => {
    upstream.setScript(jsonScript({ expand: true }));
    try {
      const via = new OpenAI({
        baseURL: `${gateway.url}/openai/v1`,
        apiKey: 'sk-test',
        maxRetries: 0,
        defaultHeaders: { 'x-context-guru-session': 'e2e-expand' },
      });
      upstream.requests.length = 0;
      const expanded: string[] = [];
      for (let t = 1; t <= 12; t++) {
        const r = await via.chat.completions.create(openaiTurn(steps, t) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
        const m = /expanded sha256=([0-9a-f]{64})/.exec(r.choices[0]!.message.content ?? '');
        if (m) expanded.push(m[1]!);
        // The client never sees the expand call.
        expect(r.choices[0]!.message.tool_calls ?? []).toEqual([]);
      }
      expect(expanded.length).toBeGreaterThan(0);
      const known = new Set(steps.flatMap((s) => [sha(s.output), sha(compactIfJson(s.output))]));
      for (const h of expanded) expect(known.has(h)).toBe(true);
      for (const r of upstream.requests) expect(validateProviderShape('openai', r.body)).toEqual([]);
    } finally {
      upstream.setScript(jsonScript({ expand: false }));
    }
  });
});

function compactIfJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}
