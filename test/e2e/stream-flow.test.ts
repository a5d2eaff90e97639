// A stream that does not open with an expand call flows to the client from its first event, even
// on a request where the gateway is watching for expand calls: the provider here sends the opening
// of its answer and then waits until the client has seen the first words. A gateway that held the
// stream back (buffered past the peek) would leave both sides waiting and the test would time out.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicTextSse, openAiTextSse } from '../support/fake-upstream-sse';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n';
const ANSWER = 'The parser splits on commas before trimming, so "a, b" yields " b". Trim first, then split.';

let server: Server;
let gateway: GatewayHarness;
let release: () => void = () => undefined;
const seen: Array<{ advertised: boolean; markers: boolean }> = [];

/** Where the first text delta's event ends: the provider pauses right after it. */
function firstTextEnd(sse: string, needle: string): number {
  const at = sse.indexOf(needle);
  return sse.indexOf('\n\n', at) + 2;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      seen.push({ advertised: raw.includes('"context_guru_expand"'), markers: /<<cg:[0-9a-f]{16}>>/.test(raw) });
      const anthropic = (req.url ?? '').includes('/messages');
      const sse = anthropic ? anthropicTextSse(ANSWER) : openAiTextSse(ANSWER);
      const cut = firstTextEnd(sse, anthropic ? '"text_delta"' : '"content":"The');
      const held = new Promise<void>((r) => (release = r));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(sse.slice(0, cut));
      void held.then(() => res.end(sse.slice(cut)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  gateway = await startGateway(`http://127.0.0.1:${port}`, { CONFIG });
});
afterAll(async () => {
  await gateway.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const steps = agentSteps(8, 67);

it('Anthropic: the first words arrive while the provider is still holding the rest', async () => {
  const client = new Anthropic({
    baseURL: `${gateway.url}/anthropic`,
    apiKey: 'sk-ant-flow',
    maxRetries: 0,
    defaultHeaders: { 'x-context-guru-session': 'flow-a' },
  });
  const stream = client.messages.stream(anthropicTurn(steps, 6) as unknown as Anthropic.MessageCreateParamsStreaming);
  let firstWords = '';
  stream.on('text', (delta) => {
    if (!firstWords) firstWords = delta;
    release();
  });
  const final = await stream.finalMessage();
  expect(firstWords.length).toBeGreaterThan(0);
  expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: ANSWER })]);
  // The gateway was intercepting on this request: it carried markers and the expand tool.
  expect(seen[seen.length - 1]).toEqual({ advertised: true, markers: true });
}, 20_000);

it('OpenAI: the first words arrive while the provider is still holding the rest', async () => {
  const client = new OpenAI({
    baseURL: `${gateway.url}/openai/v1`,
    apiKey: 'sk-flow',
    maxRetries: 0,
    defaultHeaders: { 'x-context-guru-session': 'flow-o' },
  });
  const stream = client.chat.completions.stream(
    openaiTurn(steps, 6, { stream_options: { include_usage: true } }) as unknown as OpenAI.ChatCompletionCreateParamsStreaming,
  );
  let firstWords = '';
  stream.on('content', (delta) => {
    if (!firstWords) firstWords = delta;
    release();
  });
  const final = await stream.finalChatCompletion();
  expect(firstWords.length).toBeGreaterThan(0);
  expect(final.choices[0]!.message.content).toBe(ANSWER);
  expect(seen[seen.length - 1]).toEqual({ advertised: true, markers: true });
}, 20_000);
