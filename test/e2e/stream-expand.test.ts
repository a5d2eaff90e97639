// Streaming through the real gateway with both official SDKs: an expand call — first, after a text
// preamble, or after 76 KiB of thinking — is withheld, resolved, continued upstream and stitched
// into the same stream, so the client's stream helper assembles one message without the call; any
// other stream is relayed as it comes. The usage of every round lands in /stats, the stream paths
// in /stats and /metrics.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createHash } from 'node:crypto';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import {
  anthropicExpandSse,
  anthropicSse,
  anthropicTextSse,
  openAiSse,
  openAiTextSse,
  openAiExpandSse,
  SIGNATURE,
} from '../support/fake-upstream-sse';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { PromptCacheSim, cachingScript, type Bill, type BilledRequest } from '../support/prompt-cache';
import { answerText, readTurn } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n';
type Mode = 'expand_first' | 'text' | 'text_then_expand' | 'long_thinking_then_expand';

let upstream: FakeUpstream;
let gateway: GatewayHarness;
let mode: Mode = 'text';
const log: BilledRequest[] = [];
// An original the model expanded is kept verbatim tenant-wide from then on, so each request works
// on a transcript of its own (a fresh seed) to have markers to expand.
let seed = 61;
const known = new Set<string>();
function fresh() {
  const steps = agentSteps(8, seed++);
  for (const s of steps) known.add(sha(s.output)).add(sha(compactIfJson(s.output)));
  return steps;
}
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function compactIfJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

function anthropicUsage(b: Bill) {
  return { input_tokens: b.fresh, cache_read_input_tokens: b.cacheRead, cache_creation_input_tokens: b.cacheWrite, output_tokens: 87 };
}

function openAiUsage(b: Bill) {
  return { prompt_tokens: b.fresh + b.cacheRead, completion_tokens: 64, cached_tokens: b.cacheRead };
}

/** The provider: answers every request with a stream shaped by `mode`. */
function script(req: RecordedRequest, bill: Bill): ScriptedReply {
  const turn = readTurn(req);
  const wantsExpand = turn.advertised && turn.markerId !== undefined && turn.expandResults.length === 0 && mode !== 'text';
  const text = answerText(turn);
  if (req.dialect === 'anthropic') {
    const usage = anthropicUsage(bill);
    if (!wantsExpand) return { kind: 'sse', events: [anthropicTextSse(text, { usage })] };
    if (mode === 'expand_first') return { kind: 'sse', events: [anthropicExpandSse([turn.markerId!], { usage })] };
    if (mode === 'text_then_expand')
      return { kind: 'sse', events: [anthropicExpandSse([turn.markerId!], { usage, lead: 'Let me look at the full log.' })] };
    const thinking = 'Checking each failing assertion against the parser source. '.repeat(1300); // ≈ 76 KiB
    // Real providers send a long stream in network-sized reads, not 37-byte pieces.
    return {
      kind: 'sse',
      chunkSize: 1460,
      events: [
        anthropicSse(
          [
            { type: 'thinking', thinking, signature: SIGNATURE },
            { type: 'tool_use', id: 'toolu_01LongThink', name: 'context_guru_expand', input: { id: turn.markerId! } },
          ],
          { usage },
        ),
      ],
    };
  }
  const usage = openAiUsage(bill);
  if (!wantsExpand) return { kind: 'sse', events: [openAiTextSse(text, { usage })] };
  if (mode === 'expand_first') return { kind: 'sse', events: [openAiExpandSse([turn.markerId!], { usage })] };
  return {
    kind: 'sse',
    events: [
      openAiSse('Let me look at the full log.', [{ id: 'call_LateExpand', name: 'context_guru_expand', args: { id: turn.markerId! } }], {
        usage,
      }),
    ],
  };
}

beforeAll(async () => {
  upstream = await startFakeUpstream(cachingScript(new PromptCacheSim(), script, log));
  gateway = await startGateway(upstream.url, { CONFIG });
});
afterAll(async () => {
  // Every body the gateway sent — continuations included — is one the provider accepts.
  for (const r of upstream.requests) expect(validateProviderShape(r.dialect, r.body)).toEqual([]);
  await gateway.close();
  await upstream.close();
});

type Stats = Record<string, number>;
const stats = async (): Promise<Stats> => (await (await fetch(`${gateway.url}/stats`)).json()) as Stats;
/** /stats once the gateway has recorded `n` more requests (it records a stream when it has ended). */
async function statsAfter(before: Stats, n: number): Promise<Stats> {
  for (let i = 0; i < 200; i++) {
    const s = await stats();
    if (s.requests! >= before.requests! + n) return s;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`the gateway did not record ${n} more request(s)`);
}
const anthropic = (session: string) =>
  new Anthropic({
    baseURL: `${gateway.url}/anthropic`,
    apiKey: `sk-ant-${session}`,
    maxRetries: 0,
    defaultHeaders: { 'x-context-guru-session': session },
  });
const openai = (session: string) =>
  new OpenAI({
    baseURL: `${gateway.url}/openai/v1`,
    apiKey: `sk-${session}`,
    maxRetries: 0,
    defaultHeaders: { 'x-context-guru-session': session },
  });

/** Six outputs on the first turn: nothing is cached yet, so mask offloads the three oldest. */
const anthropicBody = () => anthropicTurn(fresh(), 6) as unknown as Anthropic.MessageCreateParamsStreaming;
const openaiBody = () =>
  ({ ...openaiTurn(fresh(), 6), stream_options: { include_usage: true } }) as unknown as OpenAI.ChatCompletionCreateParamsStreaming;

describe('a stream that opens with an expand call is resolved and stitched', () => {
  it('Anthropic: the stream helper gets one message, the answer to the original', async () => {
    mode = 'expand_first';
    const before = await stats();
    const at = upstream.requests.length;
    const final = await anthropic('stream-a1').messages.stream(anthropicBody()).finalMessage();
    expect(upstream.requests.length - at).toBe(2);
    expect(final.content).toHaveLength(1);
    const block = final.content[0]!;
    expect(block.type).toBe('text');
    const hash = /expanded sha256=([0-9a-f]{64})/.exec(block.type === 'text' ? block.text : '')![1]!;
    expect(known.has(hash)).toBe(true);
    expect(final.stop_reason).toBe('end_turn');
    // The usage is both rounds', as the provider billed them.
    const [r0, r1] = log.slice(-2).map((l) => l.bill);
    expect(final.usage.cache_read_input_tokens).toBe(r0!.cacheRead + r1!.cacheRead);
    const after = await statsAfter(before, 1);
    expect(after.sse_streamed).toBe(before.sse_streamed! + 1);
    expect(after.expand_rounds).toBe(before.expand_rounds! + 1);
    expect(after.bounces).toBe(before.bounces! + 1);
    expect(after.cache_read_tokens! - before.cache_read_tokens!).toBe(r0!.cacheRead + r1!.cacheRead);
    expect(after.fresh_input_tokens! - before.fresh_input_tokens!).toBe(r0!.fresh + r1!.fresh);
  });

  it('OpenAI: the stream helper gets one completion with the answer and no tool call', async () => {
    mode = 'expand_first';
    const before = await stats();
    const final = await openai('stream-o1').chat.completions.stream(openaiBody()).finalChatCompletion();
    const message = final.choices[0]!.message;
    expect(message.tool_calls ?? []).toEqual([]);
    const hash = /expanded sha256=([0-9a-f]{64})/.exec(message.content ?? '')![1]!;
    expect(known.has(hash)).toBe(true);
    expect(final.choices[0]!.finish_reason).toBe('stop');
    const [r0, r1] = log.slice(-2).map((l) => l.bill);
    expect(final.usage?.prompt_tokens_details?.cached_tokens).toBe(r0!.cacheRead + r1!.cacheRead);
    const after = await statsAfter(before, 1);
    expect(after.sse_streamed).toBe(before.sse_streamed! + 1);
    expect(after.cache_read_tokens! - before.cache_read_tokens!).toBe(r0!.cacheRead + r1!.cacheRead);
  });
});

describe('streams flow as they arrive', () => {
  it('plain answers stream through in both dialects and count as streamed', async () => {
    mode = 'text';
    const before = await stats();
    const a = await anthropic('stream-a2').messages.stream(anthropicBody()).finalMessage();
    expect(a.content[0]).toEqual(expect.objectContaining({ type: 'text', text: expect.stringMatching(/^answer to /) }));
    const o = await openai('stream-o2').chat.completions.stream(openaiBody()).finalChatCompletion();
    expect(o.choices[0]!.message.content).toMatch(/^answer to /);
    const after = await statsAfter(before, 2);
    expect(after.sse_streamed).toBe(before.sse_streamed! + 2);
    expect(after.sse_buffered).toBe(before.sse_buffered);
  });

  it('an expand call after a text preamble is stitched: the client gets the preamble and the answer', async () => {
    mode = 'text_then_expand';
    const before = await stats();
    const a = await anthropic('stream-a3').messages.stream(anthropicBody()).finalMessage();
    expect(a.content.map((b) => b.type)).toEqual(['text', 'text']);
    expect(a.content[0]).toEqual(expect.objectContaining({ text: 'Let me look at the full log.' }));
    expect(known.has(/expanded sha256=([0-9a-f]{64})/.exec(a.content[1]!.type === 'text' ? a.content[1]!.text : '')![1]!)).toBe(true);
    expect(a.stop_reason).toBe('end_turn');
    const o = await openai('stream-o3').chat.completions.stream(openaiBody()).finalChatCompletion();
    expect(o.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(o.choices[0]!.message.content).toMatch(/^Let me look at the full log\.expanded sha256=[0-9a-f]{64}$/);
    const after = await statsAfter(before, 2);
    expect(after.sse_streamed).toBe(before.sse_streamed! + 2);
    expect(after.sse_expand_after_stream).toBe(before.sse_expand_after_stream);
    expect(after.expand_rounds).toBe(before.expand_rounds! + 2);
  });

  it('an expand call behind 76 KiB of thinking is stitched too, the thinking kept with its signature', async () => {
    mode = 'long_thinking_then_expand';
    const before = await stats();
    const a = await anthropic('stream-a4').messages.stream(anthropicBody()).finalMessage();
    expect(a.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(a.content[0]).toEqual(expect.objectContaining({ signature: SIGNATURE }));
    const sent = upstream.requests[upstream.requests.length - 1]!.body as {
      messages: Array<{ role: string; content: Array<{ type: string; signature?: string }> }>;
    };
    expect(sent.messages[sent.messages.length - 2]!.content.map((b) => [b.type, b.signature])).toEqual([
      ['thinking', SIGNATURE],
      ['tool_use', undefined],
    ]);
    const after = await statsAfter(before, 1);
    expect(after.sse_streamed).toBe(before.sse_streamed! + 1);
    expect(after.sse_expand_after_stream).toBe(before.sse_expand_after_stream);
  });

  it('/metrics counts both stream paths', async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    const s = await stats();
    expect(text).toContain(`cg_sse_streams_total{path="streamed"} ${s.sse_streamed}`);
    // Stitching buffers nothing: no stream took the buffered path.
    expect(s.sse_buffered).toBe(0);
    expect(text).not.toMatch(/cg_sse_streams_total\{path="buffered"\} [1-9]/);
  });
});
