import { Readable } from 'node:stream';
import { drainPeek, peekSse, type PeekResult } from '../../../apps/gateway/src/expand/sse-peek';
import type { Dialect } from '../../../apps/gateway/src/expand/expand.types';
import {
  SIGNATURE,
  anthropicExpandSse,
  anthropicSse,
  anthropicTextSse,
  anthropicThinkingTextSse,
  chunked,
  expandToolUse,
  openAiExpandSse,
  openAiSse,
  openAiTextSse,
} from '../../support/fake-upstream-sse';

const KB64 = 64 * 1024;

async function peek(dialect: Dialect, body: string, size: number, limit = KB64): Promise<PeekResult> {
  return peekSse(Readable.from(chunked(body, size)), dialect, limit);
}

/** The peek's verdict at every chunk size, checking that peeked + rest bytes are the stream itself. */
async function verdicts(dialect: Dialect, body: string): Promise<Set<string>> {
  const seen = new Set<string>();
  for (const size of [1, 2, 3, 7, 64, 1 << 20]) {
    const p = await peek(dialect, body, size);
    seen.add(`${p.verdict}/${p.reason}`);
    expect((await drainPeek(p)).equals(Buffer.from(body, 'utf8'))).toBe(true);
  }
  return seen;
}

describe('Anthropic peek', () => {
  it('buffers a stream whose first block is an expand tool_use', async () => {
    expect(await verdicts('anthropic', anthropicExpandSse(['3f2a9c0d1e4b5a6c']))).toEqual(new Set(['expand/decided']));
  });

  it('streams a text answer, a thinking answer and a stream that speaks before calling expand', async () => {
    expect(await verdicts('anthropic', anthropicTextSse('Das Ergebnis: naïve ✓ 🚀'))).toEqual(new Set(['stream/decided']));
    expect(await verdicts('anthropic', anthropicThinkingTextSse('Let me look.', 'Done.'))).toEqual(new Set(['stream/decided']));
    expect(await verdicts('anthropic', anthropicExpandSse(['3f2a9c0d1e4b5a6c'], { lead: 'Let me fetch that.' }))).toEqual(new Set(['stream/decided']));
  });

  it('looks past leading thinking to the block after it (bounded), unless told not to', async () => {
    const thinkingThenExpand = anthropicSse([{ type: 'thinking', thinking: 'I need the masked build log.', signature: SIGNATURE }, expandToolUse('ab')]);
    expect(await verdicts('anthropic', thinkingThenExpand)).toEqual(new Set(['expand/decided']));
    const p = await peekSse(Readable.from(chunked(thinkingThenExpand, 64)), 'anthropic', KB64, { holdThinking: false });
    expect(p).toMatchObject({ verdict: 'stream', reason: 'decided' });
    const longThinking = anthropicSse([{ type: 'thinking', thinking: 'hmm '.repeat(40_000), signature: SIGNATURE }, expandToolUse('ab')]);
    const capped = await peek('anthropic', longThinking, 512);
    expect(capped).toMatchObject({ verdict: 'stream', reason: 'cap' });
  });

  it('streams a first tool_use of another tool', async () => {
    const sse = anthropicSse([{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }, expandToolUse('ab')]);
    expect(await verdicts('anthropic', sse)).toEqual(new Set(['stream/decided']));
  });

  it('decides on the first content block, not on the first bytes: pings before it do not settle it', async () => {
    const sse = anthropicExpandSse(['ab']);
    const at = sse.indexOf('event: content_block_start');
    const withPings = sse.slice(0, at) + 'event: ping\ndata: {"type": "ping"}\n\n'.repeat(5) + sse.slice(at);
    const p = await peek('anthropic', withPings, 5);
    expect(p.verdict).toBe('expand');
    // It stopped reading right after the deciding event: most of the stream is still upstream.
    expect(Buffer.concat(p.consumed).length).toBeLessThan(withPings.indexOf('content_block_delta') + 5);
  });

  it('treats an error event and message_stop as streamable, and EOF without a block too', async () => {
    const err = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    expect(await verdicts('anthropic', err)).toEqual(new Set(['stream/decided']));
    const noBlocks = anthropicSse([]);
    expect(noBlocks).toContain('message_stop');
    expect(await verdicts('anthropic', noBlocks)).toEqual(new Set(['stream/decided']));
    const start = anthropicTextSse('x').split('event: content_block_start')[0]!;
    expect(await verdicts('anthropic', start)).toEqual(new Set(['stream/eof']));
  });

  it('gives up at the byte cap and streams, never reading far past it', async () => {
    const sse = anthropicExpandSse(['ab']);
    const at = sse.indexOf('event: content_block_start');
    const pings = ': padding comment line that is not an event\n'.repeat(4000);
    const body = sse.slice(0, at) + pings + sse.slice(at);
    const p = await peek('anthropic', body, 1000, 8 * 1024);
    expect(p).toMatchObject({ verdict: 'stream', reason: 'cap', done: false });
    expect(Buffer.concat(p.consumed).length).toBeLessThanOrEqual(8 * 1024 + 1000);
    expect((await drainPeek(p)).equals(Buffer.from(body))).toBe(true);
  });

  it('reports a read error as streamable with what it had read', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('event: message_start\n');
      throw new Error('socket hang up');
    }
    const p = await peekSse(Readable.from(failing()), 'anthropic', KB64);
    expect(p).toMatchObject({ verdict: 'stream', reason: 'error', done: true });
    expect(Buffer.concat(p.consumed).toString()).toBe('event: message_start\n');
    expect((p.error as Error).message).toBe('socket hang up');
  });
});

describe('OpenAI peek', () => {
  it('buffers when the first tool call is context_guru_expand', async () => {
    expect(await verdicts('openai', openAiExpandSse(['3f2a9c0d1e4b5a6c', 'b']))).toEqual(new Set(['expand/decided']));
  });

  it('streams content (the empty role chunk does not decide), other tools first, and bare finishes', async () => {
    expect(await verdicts('openai', openAiTextSse('Hello 日本'))).toEqual(new Set(['stream/decided']));
    const other = openAiSse(null, [{ name: 'bash', args: { command: 'ls' } }, { name: 'context_guru_expand', args: { id: 'ab' } }]);
    expect(await verdicts('openai', other)).toEqual(new Set(['stream/decided']));
    expect(await verdicts('openai', openAiSse('', []))).toEqual(new Set(['stream/decided']));
  });

  it('decides on the content chunk, after the role chunk', async () => {
    const sse = openAiTextSse('Hello');
    const p = await peek('openai', sse, 1 << 20);
    expect(p.verdict).toBe('stream');
    const small = await peek('openai', sse, 3);
    const firstContent = sse.indexOf('"content":"Hello"');
    expect(Buffer.concat(small.consumed).length).toBeGreaterThan(firstContent);
    expect(Buffer.concat(small.consumed).length).toBeLessThan(sse.indexOf('\n\n', firstContent) + 6);
  });

  it('streams an error payload and [DONE]', async () => {
    expect(await verdicts('openai', 'data: {"error":{"message":"Rate limit reached","type":"requests"}}\n\n')).toEqual(new Set(['stream/decided']));
    expect(await verdicts('openai', 'data: [DONE]\n\n')).toEqual(new Set(['stream/decided']));
  });
});
