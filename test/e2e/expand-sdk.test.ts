// Expand through the real gateway with both official SDKs' helpers, the provider streaming like
// real models: the call after a text preamble, after thinking, and beside the client's own tool
// call, streaming and not. The client never receives an expand call; the tool_result the provider
// receives is byte-identical to the stashed original; every body it receives passes the shape
// validator (each tool_use answered exactly once).
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
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

  it("Anthropic messages.stream, the client's next turn: the provider is shown the rounds again, as the continuation showed them", async () => {
    mode = m;
    const session = `sdk-a-next-${m}`;
    const client = anthropic(session);
    const body = anthropicBody();
    const first = await client.messages.stream(body).finalMessage();
    const continuation = upstream.requests[upstream.requests.length - 1]!;
    await client.messages.create({
      ...body,
      messages: [...body.messages, { role: 'assistant', content: first.content }, { role: 'user', content: 'Go on.' }],
    });
    const sent = upstream.requests[upstream.requests.length - 1]!;
    expect(validateProviderShape('anthropic', sent.body)).toEqual([]);
    const messages = sent.body.messages as Array<{ role: string; content: Array<{ type: string; text?: string; name?: string }> }>;
    const n = (continuation.body.messages as unknown[]).length;
    // The model's first round with its expand call and the result: what the continuation carried.
    expect(messages.slice(n - 2, n).map((x) => JSON.stringify(x.content.map((b) => b.type)))).toEqual(
      (continuation.body.messages as typeof messages).slice(n - 2).map((x) => JSON.stringify(x.content.map((b) => b.type))),
    );
    expect(messages[n - 2]!.content.map((b) => b.name ?? b.type)).toEqual(
      m === 'thinking' ? ['thinking', 'text', 'context_guru_expand'] : ['text', 'context_guru_expand'],
    );
    expect(messages[n]).toEqual({ role: 'assistant', content: [first.content[first.content.length - 1]] });
    expect(messages[n + 1]).toEqual({ role: 'user', content: 'Go on.' });
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

  it("chat.completions.stream, the client's next turn: the provider is shown both rounds again, the expand call answered", async () => {
    mode = 'text';
    const client = openai('sdk-o-next');
    const body = openaiBody();
    const final = await client.chat.completions.stream(body).finalChatCompletion();
    const continuation = upstream.requests[upstream.requests.length - 1]!;
    await client.chat.completions.create({
      ...body,
      stream: false,
      messages: [...body.messages, final.choices[0]!.message, { role: 'user', content: 'Go on.' }],
    } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const sent = upstream.requests[upstream.requests.length - 1]!;
    expect(validateProviderShape('openai', sent.body)).toEqual([]);
    const messages = sent.body.messages as Array<Record<string, unknown>>;
    const cont = continuation.body.messages as Array<Record<string, unknown>>;
    const n = cont.length;
    // Byte for byte what the continuation carried: the first round's message and the tool result.
    expect(messages.slice(n - 2, n)).toEqual(cont.slice(n - 2));
    expect(messages[n]).toEqual(expect.objectContaining({ role: 'assistant', content: expect.stringMatching(/^expanded sha256=/) }));
    expect(messages[n + 1]).toEqual({ role: 'user', content: 'Go on.' });
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
    // The model got the original it asked for beside read_file on the runner's next request.
    expect(content).toMatch(/^expanded sha256=[0-9a-f]{64}$/);
    for (const m of runner.messages) expect(JSON.stringify(m)).not.toContain('context_guru_expand');
  });
});

describe("expand beside the client's own tool call", () => {
  /** The next forwarded request carries the withheld call right where it was and the stashed original as its result. */
  async function reinserted(session: string, dialect: 'anthropic' | 'openai', clientCall: string): Promise<void> {
    const sent = upstream.requests[upstream.requests.length - 1]!;
    expect(validateProviderShape(dialect, sent.body)).toEqual([]);
    const messages = sent.body.messages as Array<Record<string, unknown>>;
    let id: string;
    let result: unknown;
    if (dialect === 'anthropic') {
      const at = messages.findIndex((m) => JSON.stringify(m.content).includes(clientCall) && m.role === 'assistant');
      const blocks = messages[at]!.content as Array<{ type: string; id?: string; name?: string; input?: { id: string } }>;
      expect(blocks.map((b) => (b.type === 'tool_use' ? b.name : b.type))).toEqual(['text', 'read_file', 'context_guru_expand']);
      id = blocks[2]!.input!.id;
      const results = messages[at + 1]!.content as Array<{ tool_use_id: string; content: unknown }>;
      // The expand result first (the client's own results and breakpoint follow it), each call answered once.
      expect(results.map((r) => r.tool_use_id)).toEqual([blocks[2]!.id, clientCall]);
      result = results[0]!.content;
    } else {
      const at = messages.findIndex((m) => m.role === 'assistant' && JSON.stringify(m.tool_calls ?? []).includes(clientCall));
      const calls = messages[at]!.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }>;
      expect(calls.map((c) => c.function.name)).toEqual(['read_file', 'context_guru_expand']);
      id = (JSON.parse(calls[1]!.function.arguments) as { id: string }).id;
      expect(messages.slice(at + 1, at + 3).map((m) => m.tool_call_id)).toEqual([calls[1]!.id, clientCall]);
      result = messages[at + 1]!.content;
    }
    const stash = await fetch(`${gateway.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': session } });
    expect(result).toBe(await stash.text());
  }

  it('Anthropic, streamed and not: the client gets its read_file call only; its next turn gives the model the original', async () => {
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
      expect(next.content[0]).toEqual(expect.objectContaining({ type: 'text', text: expect.stringMatching(/^expanded sha256=/) }));
      await reinserted(session, 'anthropic', call.id);
    }
  });

  it('OpenAI, streamed and not: the client gets its read_file call only; its next turn gives the model the original', async () => {
    mode = 'beside';
    for (const stream of [true, false]) {
      const session = `sdk-o-beside-${stream}`;
      const client = openai(session);
      const body = openaiBody();
      const final = stream
        ? await client.chat.completions.stream(body).finalChatCompletion()
        : await client.chat.completions.create({ ...body, stream: false } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
      const message = final.choices[0]!.message;
      expect(final.choices[0]!.finish_reason).toBe('tool_calls');
      expect(message.tool_calls?.map((c) => (c.type === 'function' ? c.function.name : c.type))).toEqual(['read_file']);
      const call = message.tool_calls![0]!;
      const next = await client.chat.completions.create({
        ...body,
        stream: false,
        messages: [...body.messages, message, { role: 'tool', tool_call_id: call.id, content: 'def parse(s): ...' }],
      } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
      expect(next.choices[0]!.message.content).toMatch(/^expanded sha256=/);
      await reinserted(session, 'openai', call.id);
    }
  });
});
