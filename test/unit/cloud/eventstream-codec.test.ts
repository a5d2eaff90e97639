// The AWS event stream framing: frames round-trip with every header type, a stream cut anywhere
// (one byte at a time, or many frames in one read) yields the same frames, and a corrupted byte or
// a truncated stream is a clear error naming the frame.
import { crc32 } from 'node:zlib';
import {
  decodeFrame,
  encodeFrame,
  EventStreamError,
  FrameSplitter,
  type EventFrame,
} from '../../../apps/gateway/src/cloud/eventstream.codec';

const chunk = (json: string): EventFrame => ({
  headers: { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
  payload: Buffer.from(JSON.stringify({ bytes: Buffer.from(json).toString('base64') })),
});

function split(bytes: Buffer, sizes: number[]): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  let i = 0;
  while (at < bytes.length) {
    const n = sizes[i++ % sizes.length]!;
    out.push(bytes.subarray(at, at + n));
    at += n;
  }
  return out;
}

describe('eventstream frames', () => {
  it('round-trip headers of every kind and the payload', () => {
    const frame: EventFrame = {
      headers: { ':message-type': 'event', flag: true, off: false, n: -7, big: 1n << 40n, raw: Buffer.from([0, 1, 255]), s: 'héllo' },
      payload: Buffer.from('{"bytes":"e30="}'),
    };
    const back = decodeFrame(encodeFrame(frame));
    expect(back.headers).toEqual(frame.headers);
    expect(back.payload.equals(frame.payload)).toBe(true);
  });

  it('lay out the prelude and both checksums as the framing defines them', () => {
    const bytes = encodeFrame(chunk('{"type":"ping"}'));
    expect(bytes.readUInt32BE(0)).toBe(bytes.length);
    expect(bytes.readUInt32BE(8)).toBe(crc32(bytes.subarray(0, 8)));
    expect(bytes.readUInt32BE(bytes.length - 4)).toBe(crc32(bytes.subarray(0, bytes.length - 4)));
  });

  it('decode a frame with no headers and no payload (the smallest, 16 bytes)', () => {
    const bytes = encodeFrame({ headers: {}, payload: Buffer.alloc(0) });
    expect(bytes.length).toBe(16);
    expect(decodeFrame(bytes)).toEqual({ headers: {}, payload: Buffer.alloc(0) });
  });

  it('refuse a payload byte changed in flight: message checksum mismatch, naming the frame', () => {
    const bytes = encodeFrame(chunk('{"type":"message_stop"}'));
    bytes[bytes.length - 10] = bytes[bytes.length - 10]! ^ 0x01;
    expect(() => decodeFrame(bytes, 4)).toThrow(/frame 4: message checksum mismatch/);
  });

  it('refuse a prelude byte changed in flight before believing its lengths', () => {
    const bytes = encodeFrame(chunk('{"type":"ping"}'));
    bytes[2] = bytes[2]! ^ 0x40;
    expect(() => decodeFrame(bytes)).toThrow(EventStreamError);
    expect(() => new FrameSplitter().push(bytes)).toThrow(/frame 0: prelude checksum mismatch/);
  });
});

describe('FrameSplitter', () => {
  const frames = [
    '{"type":"message_start"}',
    `{"type":"content_block_delta","delta":{"text":"${'é'.repeat(3000)}"}}`,
    '{"type":"message_stop"}',
  ].map((j) => encodeFrame(chunk(j)));
  const stream = Buffer.concat(frames);

  it.each([
    ['one byte at a time', [1]],
    ['odd sizes that straddle preludes', [5, 13, 7, 1031]],
    ['the whole stream in one read', [stream.length]],
  ])('cuts the same exact frames from %s', (_name, sizes) => {
    const s = new FrameSplitter();
    const got = split(stream, sizes).flatMap((c) => s.push(c));
    s.end();
    expect(got.map((f) => f.toString('hex'))).toEqual(frames.map((f) => f.toString('hex')));
    expect(s.count).toBe(3);
  });

  it('says so when the stream ends inside a frame', () => {
    const s = new FrameSplitter();
    expect(s.push(stream.subarray(0, frames[0]!.length + 20))).toHaveLength(1);
    expect(() => s.end()).toThrow(/stream ended inside frame 1 \(20 bytes of it read\)/);
  });

  it('refuses impossible lengths whose prelude checksum is right', () => {
    const bad = Buffer.alloc(16);
    bad.writeUInt32BE(16, 0);
    bad.writeUInt32BE(100, 4);
    bad.writeUInt32BE(crc32(bad.subarray(0, 8)), 8);
    expect(() => new FrameSplitter().push(bad)).toThrow(/impossible lengths \(total 16, headers 100\)/);
  });
});
