import { PassThrough, Readable } from 'node:stream';
import { runExpandLoop } from '../../../apps/gateway/src/expand/expand-loop';
import { observeStream } from '../../../apps/gateway/src/expand/stream-relay';
import { anthropicRequestRaw, anthropicMessage, scriptedUpstream, stashHooks } from '../../support/fake-upstream-json';
import { anthropicExpandSse, anthropicTextSse, readBody } from '../../support/fake-upstream-sse';

function nextChunk(body: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    body.once('data', (c: Buffer) => {
      body.pause();
      resolve(c);
    });
    body.once('error', reject);
    body.resume();
  });
}

describe('stream relay', () => {
  it('hands the client its first bytes while upstream is still sending', async () => {
    const sse = anthropicTextSse('Streaming works.');
    const cut = sse.indexOf('event: content_block_delta');
    const source = new PassThrough();
    source.write(sse.slice(0, cut));
    const reply = await runExpandLoop({
      dialect: 'anthropic',
      requestRaw: anthropicRequestRaw(true),
      advertised: true,
      first: { status: 200, headers: { 'content-type': 'text/event-stream' }, body: source },
      call: scriptedUpstream([]).call,
      hooks: stashHooks({}),
    });
    const body = reply.body as Readable;
    const first = await nextChunk(body);
    expect(sse.startsWith(first.toString())).toBe(true);
    expect(source.writableEnded).toBe(false);
    source.end(sse.slice(cut));
    const rest = await readBody(body);
    expect(Buffer.concat([first, rest]).toString()).toBe(sse);
    expect((await reply.streamDone).usage).toEqual({ fresh: 2095, cacheRead: 0, cacheWrite: 0, output: 87 });
  });

  it('notices the tool name wherever a chunk boundary cuts it', async () => {
    const sse = Buffer.from(anthropicExpandSse(['abcd'], { lead: 'ok' }));
    const at = sse.indexOf('context_guru_expand');
    for (let k = 1; k < 'context_guru_expand'.length; k++) {
      const parts = [sse.subarray(0, at + k), sse.subarray(at + k)];
      const relay = observeStream({ source: Readable.from(parts), dialect: 'anthropic', sse: true, watchName: true });
      expect((await readBody(relay.body)).equals(sse)).toBe(true);
      expect((await relay.done).expandAfterStream).toBe(true);
    }
    const plain = observeStream({
      source: Readable.from([Buffer.from(anthropicTextSse('context_guru'))]),
      dialect: 'anthropic',
      sse: true,
      watchName: true,
    });
    await readBody(plain.body);
    expect((await plain.done).expandAfterStream).toBe(false);
  });

  it('passes an upstream failure mid-stream on to the client and records it', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from(anthropicTextSse('partial').slice(0, 400));
      throw new Error('upstream reset');
    }
    const source = Readable.from(failing());
    const reply = await runExpandLoop({
      dialect: 'anthropic',
      requestRaw: anthropicRequestRaw(true),
      advertised: true,
      first: { status: 200, headers: { 'content-type': 'text/event-stream' }, body: source },
      call: scriptedUpstream([]).call,
      hooks: stashHooks({}),
    });
    await expect(readBody(reply.body)).rejects.toThrow('upstream reset');
    const outcome = await reply.streamDone;
    expect((outcome.error as Error).message).toBe('upstream reset');
    // Whole events only: what reached the client is a prefix of what upstream sent.
    expect(outcome.bytes).toBeGreaterThan(0);
    expect(outcome.bytes).toBeLessThanOrEqual(400);
  });

  it('reads usage from the tail of a JSON body too large to keep', async () => {
    const big = JSON.stringify(anthropicMessage([{ type: 'text', text: 'y'.repeat(3 << 20) }], { input_tokens: 11, output_tokens: 60000 }));
    const parts: Buffer[] = [];
    for (let i = 0; i < big.length; i += 50_000) parts.push(Buffer.from(big.slice(i, i + 50_000)));
    const reply = await runExpandLoop({
      dialect: 'anthropic',
      requestRaw: anthropicRequestRaw(false),
      advertised: false,
      first: { status: 200, headers: { 'content-type': 'application/json' }, body: Readable.from(parts) },
      call: scriptedUpstream([]).call,
      hooks: stashHooks({}),
    });
    expect(reply.mode).toBe('json');
    expect((await readBody(reply.body)).length).toBe(big.length);
    expect(await reply.usageDone).toEqual({ fresh: 11, cacheRead: 0, cacheWrite: 0, output: 60000 });
  });

  it('keeps the upstream length on a relayed JSON answer, never on an event stream', async () => {
    const relay = (contentType: string, body: string) =>
      runExpandLoop({
        dialect: 'anthropic',
        requestRaw: anthropicRequestRaw(false),
        advertised: false,
        first: {
          status: 200,
          headers: { 'content-type': contentType, 'content-length': String(body.length) },
          body: Readable.from([Buffer.from(body)]),
        },
        call: scriptedUpstream([]).call,
        hooks: stashHooks({}),
      });
    const json = await relay(
      'application/json',
      JSON.stringify(anthropicMessage([{ type: 'text', text: 'ok' }], { input_tokens: 1, output_tokens: 1 })),
    );
    expect(json.keepsLength).toBe(true);
    const sse = await relay('text/event-stream', anthropicTextSse('ok'));
    expect(sse.keepsLength).toBeUndefined();
    await Promise.all([readBody(json.body), readBody(sse.body)]);
  });

  it('settles and releases upstream when the client never reads', async () => {
    const source = new PassThrough();
    const relay = observeStream({ source, dialect: 'openai', sse: true, watchName: false });
    relay.body.destroy();
    expect(await relay.done).toMatchObject({ aborted: true, bytes: 0 });
    expect(source.destroyed).toBe(true);
  });
});
