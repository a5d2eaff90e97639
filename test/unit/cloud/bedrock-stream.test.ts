// Bedrock's stream through the SSE view and back: every frame relayed unchanged comes back as its
// own exact bytes (padding field included), events the gateway wrote are framed anew with valid
// checksums, error events become exception frames, and a corrupt frame fails the stream clearly.
import { Readable } from 'node:stream';
import { chunkFrame, EventstreamToSse, exceptionFrame, SseToEventstream } from '../../../apps/gateway/src/cloud/bedrock-stream';
import { decodeFrame, encodeFrame, FrameSplitter } from '../../../apps/gateway/src/cloud/eventstream.codec';

async function through(t: NodeJS.ReadWriteStream, parts: Buffer[]): Promise<Buffer> {
  const out: Buffer[] = [];
  const piped = Readable.from(parts).pipe(t);
  for await (const c of piped) out.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(out);
}

/** A frame as Bedrock sends it, with its length-masking padding field. */
const upstreamChunk = (json: string) =>
  encodeFrame({
    headers: { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
    payload: Buffer.from(JSON.stringify({ bytes: Buffer.from(json).toString('base64'), p: 'abcdefghijklmnopq' })),
  });

const events = [
  '{"type":"message_start","message":{"id":"msg_1","role":"assistant","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}',
  '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"héllo ✓"}}',
  '{"type":"content_block_stop","index":0}',
  '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}',
  '{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":5}}',
];
const upstream = Buffer.concat(events.map(upstreamChunk));

function frames(bytes: Buffer) {
  const s = new FrameSplitter();
  const out = s.push(bytes).map((f) => decodeFrame(f));
  s.end();
  return out;
}

describe('EventstreamToSse', () => {
  it('turns each chunk into the Anthropic event it carries, whatever the cuts', async () => {
    const sse = (
      await through(new EventstreamToSse(), [upstream.subarray(0, 7), upstream.subarray(7, 300), upstream.subarray(300)])
    ).toString();
    const data = sse.split('\n').filter((l) => l.startsWith('data: '));
    expect(data.map((l) => l.slice(6))).toEqual(events);
    expect(sse.split('\n').filter((l) => l.startsWith('event: '))).toEqual(events.map((e) => `event: ${JSON.parse(e).type}`));
  });

  it('gives an exception frame as an Anthropic error event with its exception type', async () => {
    const sse = (await through(new EventstreamToSse(), [exceptionFrame('throttlingException', 'slow down')])).toString();
    expect(sse).toContain('event: error\ndata: {"type":"error","error":{"type":"throttlingException","message":"slow down"}}');
  });

  it('fails the stream on a corrupted frame, naming it', async () => {
    const bad = Buffer.from(upstream);
    const at = upstreamChunk(events[0]!).length + 40;
    bad[at] = bad[at]! ^ 1;
    await expect(through(new EventstreamToSse(), [bad])).rejects.toThrow(/eventstream: frame 1: message checksum mismatch/);
  });
});

describe('SseToEventstream', () => {
  it('gives back the upstream bytes exactly when nothing was changed', async () => {
    const sse = await through(new EventstreamToSse(), [upstream]);
    const back = await through(new SseToEventstream(), [sse.subarray(0, 333), sse.subarray(333)]);
    expect(back.equals(upstream)).toBe(true);
  });

  it('frames events the gateway wrote anew, and error events as exceptions', async () => {
    const written =
      'event: content_block_start\ndata: {"type":"content_block_start","index":1}\n\n: keep-alive\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n';
    const out = frames(await through(new SseToEventstream(), [Buffer.from(written)]));
    expect(out).toHaveLength(2);
    expect(out[0]!.headers[':event-type']).toBe('chunk');
    expect(Buffer.from(JSON.parse(out[0]!.payload.toString()).bytes, 'base64').toString()).toBe('{"type":"content_block_start","index":1}');
    expect(out[1]!.headers).toMatchObject({ ':message-type': 'exception', ':exception-type': 'serviceUnavailableException' });
    expect(JSON.parse(out[1]!.payload.toString())).toEqual({ message: 'busy' });
    expect(chunkFrame('{"type":"ping"}').equals(encodeFrame(decodeFrame(chunkFrame('{"type":"ping"}'))))).toBe(true);
  });
});
