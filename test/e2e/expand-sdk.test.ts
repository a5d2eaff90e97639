// Expand through the real gateway with both official SDKs' helpers, the provider streaming like
// real models: the call after a text preamble, after thinking, and beside the client's own tool
// call, streaming and not. The client never receives an expand call; the tool_result the provider
// receives is byte-identical to the stashed original; every body it receives passes the shape
// validator (each tool_use answered exactly once).
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { validateProviderShape } from '../../apps/gateway/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { anthropicMessage, openAiCompletion } from '../support/fake-upstream-json';
import { anthropicSse, openAiSse, SIGNATURE, type AnthropicBlock } from '../support/fake-upstream-sse';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { answerText, readTurn } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n';
const PREAMBLE = 'Let me look at the full output.';
type Mode = 'text' | 'thinking' | 'beside';

let upstream: FakeUpstream;
let gateway: GatewayHarness;
let mode: Mode = 'text';
// An original the model expanded is kept verbatim tenant-wide from then on, so every test works
// on transcripts of its own (a fresh seed) to have markers to expand.
let seed = 100;
const fresh = () => agentSteps(8, seed++);

const readFile = { id: 'call_read_beside', name: 'read_file', input: { path: 'src/parser.py' } };

function anthropicBlocks(markerId: string): AnthropicBlock[] {
  const expand: AnthropicBlock = { type: 'tool_use', id: 'toolu_01ExpandAfter', name: 'context_guru_expand', input: { id: markerId } };
  if (mode === 'thinking')
    return [
      { type: 'thinking', thinking: 'The failing output was shortened; I need it whole.', signature: SIGNATURE },
      { type: 'text', text: PREAMBLE },
      expand,
    ];
  if (mode === 'beside')
    return [
      { type: 'text', text: PREAMBLE },
      { type: 'tool_use', id: `toolu_${readFile.id}`, name: readFile.name, input: readFile.input },
      expand,
    ];
  return [{ type: 'text', text: PREAMBLE }, expand];
}

function script(req: RecordedRequest): ScriptedReply {
  const turn = readTurn(req);
  const stream = req.body.stream === true;
  // The model asks for a marker on the turn the task arrives, not after its own read_file ran.
  const wants =
    turn.advertised &&
    turn.markerId !== undefined &&
    turn.expandResults.length === 0 &&
    !JSON.stringify(req.body.messages).includes(readFile.id);
  if (req.dialect === 'anthropic') {
    const blocks: AnthropicBlock[] = wants ? anthropicBlocks(turn.markerId!) : [{ type: 'text', text: answerText(turn) }];
    return stream ? { kind: 'sse', events: [anthropicSse(blocks)] } : { kind: 'json', body: anthropicMessage(blocks) };
  }
  const calls = wants
    ? [
        ...(mode === 'beside' ? [{ id: readFile.id, name: readFile.name, args: readFile.input }] : []),
        { id: 'call_ExpandAfter', name: 'context_guru_expand', args: { id: turn.markerId! } },
      ]
    : [];
  const content = wants ? PREAMBLE : answerText(turn);
  return stream ? { kind: 'sse', events: [openAiSse(content, calls)] } : { kind: 'json', body: openAiCompletion(content, calls) };
}

beforeAll(async () => {
  upstream = await startFakeUpstream(script);
  gateway = await startGateway(upstream.url, { CONFIG });
});
afterAll(async () => {
  for (const r of upstream.requests) expect(validateProviderShape(r.dialect, r.body)).toEqual([]);
  await gateway.close();
  await upstream.close();
});

const anthropic = (session: string) =>
  new Anthropic({
    baseURL: `${gateway.url}/anthropic`,
    apiKey: 'sk-ant-x',
    maxRetries: 0,
    defaultHeaders: { 'x-context-guru-session': session },
  });
const openai = (session: string) =>
  new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: 'sk-x', maxRetries: 0, defaultHeaders: { 'x-context-guru-session': session } });
const anthropicBody = () => anthropicTurn(fresh(), 6) as unknown as Anthropic.MessageCreateParamsNonStreaming;
const openaiBody = () =>
  ({ ...openaiTurn(fresh(), 6), stream_options: { include_usage: true } }) as unknown as OpenAI.ChatCompletionCreateParamsStreaming;

/** The provider's tool_result for the expand call equals the stash, byte for byte. */
async function expandResultIsStashed(session: string): Promise<void> {
  const last = upstream.requests[upstream.requests.length - 1]!;
  const messages = last.body.messages as Array<{ role: string; content: unknown; tool_call_id?: string }>;
  let id: string;
  let result: unknown;
  if (last.dialect === 'anthropic') {
    const call = (messages[messages.length - 2]!.content as Array<{ type: string; name?: string; input?: { id: string } }>).find(
      (b) => b.name === 'context_guru_expand',
    )!;
    id = call.input!.id;
    result = (messages[messages.length - 1]!.content as Array<{ content: unknown }>)[0]!.content;
  } else {
    const assistant = messages[messages.length - 2] as unknown as { tool_calls: Array<{ function: { arguments: string } }> };
    id = (JSON.parse(assistant.tool_calls[0]!.function.arguments) as { id: string }).id;
    result = messages[messages.length - 1]!.content;
  }
  const stash = await fetch(`${gateway.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': session } });
  expect(stash.status).toBe(200);
  expect(result).toBe(await stash.text());
}

describe.each(['text', 'thinking'] as const)('expand after %s', (m) => {
  it('Anthropic messages.stream: one message, the preamble then the answer, no expand call', async () => {
    mode = m;
    const session = `sdk-a-${m}`;
    const final = await anthropic(session).messages.stream(anthropicBody()).finalMessage();
    expect(final.content.map((b) => b.type)).toEqual(m === 'thinking' ? ['thinking', 'text', 'text'] : ['text', 'text']);
    expect(JSON.stringify(final)).not.toContain('context_guru_expand');
    expect(final.content[final.content.length - 1]).toEqual(expect.objectContaining({ text: expect.stringMatching(/^expanded sha256=/) }));
    expect(final.stop_reason).toBe('end_turn');
    await expandResultIsStashed(session);
  });

  it('Anthropic messages.create (not streamed): the rounds merged', async () => {
    mode = m;
    const session = `sdk-a-json-${m}`;
    const final = await anthropic(session).messages.create(anthropicBody());
    expect(JSON.stringify(final)).not.toContain('context_guru_expand');
    expect(final.content.slice(-2)).toEqual([
      expect.objectContaining({ text: PREAMBLE }),
      expect.objectContaining({ text: expect.stringMatching(/^expanded sha256=/) }),
    ]);
    await expandResultIsStashed(session);
  });
});

describe('OpenAI after content', () => {
  it('chat.completions.stream: one completion, the preamble then the answer, no tool call', async () => {
    mode = 'text';
    const final = await openai('sdk-o-text').chat.completions.stream(openaiBody()).finalChatCompletion();
    expect(final.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(final.choices[0]!.message.content).toMatch(new RegExp(`^${PREAMBLE.replace('.', '\\.')}expanded sha256=[0-9a-f]{64}$`));
    expect(final.choices[0]!.finish_reason).toBe('stop');
    await expandResultIsStashed('sdk-o-text');
  });

  it('chat.completions.create (not streamed): the rounds merged', async () => {
    mode = 'text';
    const final = await openai('sdk-o-json').chat.completions.create({
      ...openaiBody(),
      stream: false,
    } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(final.choices[0]!.message.tool_calls).toBeUndefined();
    expect(final.choices[0]!.message.content).toMatch(/^Let me look at the full output\.expanded sha256=/);
    await expandResultIsStashed('sdk-o-json');
  });

  it('runTools: the runner only ever runs its own tools and finishes', async () => {
    mode = 'beside';
    const ran: string[] = [];
    const runner = openai('sdk-o-run').chat.completions.runTools({
      ...(openaiTurn(fresh(), 6) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming),
      stream: true,
      tools: [
        {
          type: 'function',
          function: {
            name: 'read_file',
            parameters: { type: 'object', properties: { path: { type: 'string' } } },
            function: (args: { path: string }) => {
              ran.push(args.path);
              return 'def parse(s):\n    return s.split(",")\n';
            },
            parse: JSON.parse,
          },
        },
      ],
    } as never);
    const content = await runner.finalContent();
    expect(ran).toEqual(['src/parser.py']);
    expect(content).toMatch(/^answer to /);
    for (const m of runner.messages) expect(JSON.stringify(m)).not.toContain('context_guru_expand');
  });
});

describe("expand beside the client's own tool call", () => {
  it('Anthropic, streamed and not: the client gets its read_file call only, and its next turn is valid', async () => {
    mode = 'beside';
    for (const stream of [true, false]) {
      const session = `sdk-a-beside-${stream}`;
      const client = anthropic(session);
      const at = upstream.requests.length;
      const body = anthropicBody();
      const first = stream ? await client.messages.stream(body).finalMessage() : await client.messages.create(body);
      expect(upstream.requests.length - at).toBe(1);
      expect(first.stop_reason).toBe('tool_use');
      expect(first.content.map((b) => (b.type === 'tool_use' ? b.name : b.type))).toEqual(['text', 'read_file']);
      const call = first.content[1] as Anthropic.ToolUseBlock;
      const next = await client.messages.create({
        ...body,
        messages: [
          ...body.messages,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'def parse(s): ...' }] },
        ],
      });
      expect(next.content[0]).toEqual(expect.objectContaining({ type: 'text' }));
      const sent = upstream.requests[upstream.requests.length - 1]!;
      expect(validateProviderShape('anthropic', sent.body)).toEqual([]);
    }
  });

  it('OpenAI streamed: the client gets its read_file call only', async () => {
    mode = 'beside';
    const final = await openai('sdk-o-beside').chat.completions.stream(openaiBody()).finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls?.map((c) => (c.type === 'function' ? c.function.name : c.type))).toEqual(['read_file']);
  });
});
