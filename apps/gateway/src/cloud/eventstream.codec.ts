// The AWS event stream binary framing (application/vnd.amazon.eventstream), as Bedrock's
// invoke-with-response-stream answers: each message is a prelude (total length, headers length,
// CRC32 of those 8 bytes), the headers, the payload and a CRC32 of everything before it. Frames
// are cut from a byte stream however the network splits them, and a checksum that does not match
// is an error naming the frame, never a silently wrong event.
import { crc32 } from 'node:zlib';

/** A header value as the framing carries it; strings are what Bedrock sends and what we write. */
type HeaderValue = string | number | bigint | boolean | Buffer;

export interface EventFrame {
  headers: Record<string, HeaderValue>;
  payload: Buffer;
}

/** A frame that cannot be read: the stream is corrupt from here on. */
export class EventStreamError extends Error {
  constructor(message: string) {
    super(`eventstream: ${message}`);
    this.name = 'EventStreamError';
  }
}

const PRELUDE = 12;
const TRAILER = 4;
/** The service's own bound on one message (16 MiB) and on its headers (128 KiB). */
const MAX_FRAME = 16 * 1024 * 1024;
const MAX_HEADERS = 128 * 1024;

const hex = (n: number): string => `0x${n.toString(16).padStart(8, '0')}`;

/** Type tags of the header values (the framing's own numbering). */
const enum T {
  True = 0,
  False = 1,
  Byte = 2,
  Short = 3,
  Int = 4,
  Long = 5,
  Bytes = 6,
  String = 7,
  Timestamp = 8,
  Uuid = 9,
}

function encodeHeaders(headers: Record<string, HeaderValue>): Buffer {
  const parts: Buffer[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const n = Buffer.from(name, 'utf8');
    if (n.length > 255) throw new EventStreamError(`header name "${name.slice(0, 32)}…" is over 255 bytes`);
    parts.push(Buffer.from([n.length]), n);
    if (typeof value === 'boolean') parts.push(Buffer.from([value ? T.True : T.False]));
    else if (typeof value === 'number') {
      const b = Buffer.alloc(5);
      b[0] = T.Int;
      b.writeInt32BE(value, 1);
      parts.push(b);
    } else if (typeof value === 'bigint') {
      const b = Buffer.alloc(9);
      b[0] = T.Long;
      b.writeBigInt64BE(value, 1);
      parts.push(b);
    } else {
      const v = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
      if (v.length > 0xffff) throw new EventStreamError(`header "${name}" value is over 65535 bytes`);
      const b = Buffer.alloc(3);
      b[0] = typeof value === 'string' ? T.String : T.Bytes;
      b.writeUInt16BE(v.length, 1);
      parts.push(b, v);
    }
  }
  return Buffer.concat(parts);
}

/** One message, checksums included. */
export function encodeFrame(frame: EventFrame): Buffer {
  const headers = encodeHeaders(frame.headers);
  if (headers.length > MAX_HEADERS) throw new EventStreamError(`headers of ${headers.length} bytes are over ${MAX_HEADERS}`);
  const total = PRELUDE + headers.length + frame.payload.length + TRAILER;
  if (total > MAX_FRAME) throw new EventStreamError(`a frame of ${total} bytes is over ${MAX_FRAME}`);
  const out = Buffer.alloc(total);
  out.writeUInt32BE(total, 0);
  out.writeUInt32BE(headers.length, 4);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  headers.copy(out, PRELUDE);
  frame.payload.copy(out, PRELUDE + headers.length);
  out.writeUInt32BE(crc32(out.subarray(0, total - TRAILER)), total - TRAILER);
  return out;
}

function need(buf: Buffer, at: number, n: number, what: string): void {
  if (at + n > buf.length) throw new EventStreamError(`header ${what} runs past the headers section`);
}

function readValue(h: Buffer, at: number, type: number, name: string): [HeaderValue, number] {
  switch (type) {
    case T.True:
      return [true, at];
    case T.False:
      return [false, at];
    case T.Byte:
      need(h, at, 1, name);
      return [h.readInt8(at), at + 1];
    case T.Short:
      need(h, at, 2, name);
      return [h.readInt16BE(at), at + 2];
    case T.Int:
      need(h, at, 4, name);
      return [h.readInt32BE(at), at + 4];
    case T.Long:
    case T.Timestamp:
      need(h, at, 8, name);
      return [h.readBigInt64BE(at), at + 8];
    case T.Uuid:
      need(h, at, 16, name);
      return [Buffer.from(h.subarray(at, at + 16)), at + 16];
    case T.Bytes:
    case T.String: {
      need(h, at, 2, name);
      const len = h.readUInt16BE(at);
      need(h, at + 2, len, name);
      const raw = h.subarray(at + 2, at + 2 + len);
      return [type === T.String ? raw.toString('utf8') : Buffer.from(raw), at + 2 + len];
    }
    default:
      throw new EventStreamError(`header "${name}" has unknown value type ${type}`);
  }
}

function decodeHeaders(h: Buffer): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  let at = 0;
  while (at < h.length) {
    const nameLen = h[at] ?? 0;
    need(h, at + 1, nameLen + 1, 'name');
    const name = h.subarray(at + 1, at + 1 + nameLen).toString('utf8');
    const [value, next] = readValue(h, at + 2 + nameLen, h[at + 1 + nameLen] ?? -1, name);
    out[name] = value;
    at = next;
  }
  return out;
}

/**
 * The frame's total length, once the prelude's own checksum matched (its lengths are not believed
 * before) and the lengths are possible.
 */
function checkPrelude(prelude: Buffer, n: number): number {
  const total = prelude.readUInt32BE(0);
  const headersLen = prelude.readUInt32BE(4);
  const computed = crc32(prelude.subarray(0, 8));
  const stated = prelude.readUInt32BE(8);
  if (computed !== stated)
    throw new EventStreamError(`frame ${n}: prelude checksum mismatch (computed ${hex(computed)}, frame says ${hex(stated)})`);
  if (total < PRELUDE + TRAILER + headersLen || total > MAX_FRAME || headersLen > MAX_HEADERS)
    throw new EventStreamError(`frame ${n}: impossible lengths (total ${total}, headers ${headersLen})`);
  return total;
}

/** One whole message (exactly its bytes), checksums verified. `n` names it in errors. */
export function decodeFrame(bytes: Buffer, n = 0): EventFrame {
  if (bytes.length < PRELUDE + TRAILER) throw new EventStreamError(`frame ${n}: ${bytes.length} bytes is shorter than any frame`);
  const total = checkPrelude(bytes, n);
  if (total !== bytes.length) throw new EventStreamError(`frame ${n}: says ${total} bytes but is ${bytes.length}`);
  const headersLen = bytes.readUInt32BE(4);
  const computed = crc32(bytes.subarray(0, total - TRAILER));
  const stated = bytes.readUInt32BE(total - TRAILER);
  if (computed !== stated)
    throw new EventStreamError(`frame ${n}: message checksum mismatch (computed ${hex(computed)}, frame says ${hex(stated)})`);
  return {
    headers: decodeHeaders(bytes.subarray(PRELUDE, PRELUDE + headersLen)),
    payload: Buffer.from(bytes.subarray(PRELUDE + headersLen, total - TRAILER)),
  };
}

/**
 * Cuts whole messages out of a byte stream, each as its own exact bytes (so an unchanged frame can
 * be relayed as it came). Holds at most one partial frame.
 */
export class FrameSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Frames cut so far (errors name the frame by it). */
  count = 0;

  push(chunk: Buffer): Buffer[] {
    if (chunk.length === 0) return [];
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const frames: Buffer[] = [];
    while (this.pendingBytes >= PRELUDE) {
      const total = checkPrelude(this.prelude(), this.count);
      // A frame still arriving is not joined yet: a big one in many reads is copied once.
      if (this.pendingBytes < total) break;
      const whole = this.pending.length === 1 && this.pending[0] ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
      frames.push(whole.length === total ? whole : Buffer.from(whole.subarray(0, total)));
      const rest = whole.subarray(total);
      this.pending = rest.length ? [rest] : [];
      this.pendingBytes = rest.length;
      this.count++;
    }
    return frames;
  }

  /** The stream ended: a frame left half-read is an error. */
  end(): void {
    if (this.pendingBytes > 0)
      throw new EventStreamError(`stream ended inside frame ${this.count} (${this.pendingBytes} bytes of it read)`);
  }

  private prelude(): Buffer {
    const first = this.pending[0];
    if (first && first.length >= PRELUDE) return first;
    return Buffer.concat(this.pending, this.pendingBytes).subarray(0, PRELUDE);
  }
}
