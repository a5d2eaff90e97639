// Bedrock's event stream seen as the Anthropic SSE the expand loop, the stitcher and the usage
// watch already read, and back. Each upstream frame becomes one SSE event that carries the frame's
// own bytes in a comment line; an event relayed unchanged is therefore written back as exactly the
// frame that came (padding and checksums included), and only events the gateway made or rewrote
// (renumbered blocks, the stitched close, errors) are framed anew.
import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { decodeFrame, encodeFrame, EventStreamError, FrameSplitter, type EventFrame } from './eventstream.codec';

export const EVENTSTREAM_TYPE = 'application/vnd.amazon.eventstream';
const TAG = ':cg-frame ';

function toBuffer(chunk: unknown): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), 'utf8');
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The event type of an Anthropic event's JSON text (Anthropic writes `type` first; else parsed). */
function eventType(json: string): string {
  const m = /^\s*\{\s*"type"\s*:\s*"([A-Za-z_]+)"/.exec(json);
  if (m?.[1]) return m[1];
  try {
    return str((JSON.parse(json) as Record<string, unknown>)['type']) || 'message';
  } catch {
    return 'message';
  }
}

const dataLines = (json: string): string =>
  json
    .split(/\r\n|\r|\n/)
    .map((l) => `data: ${l}\n`)
    .join('');

/** An exception (or error) frame as Anthropic's `error` event, with the frame's exception type. */
function exceptionEvent(frame: EventFrame): string {
  const h = frame.headers;
  let message = str(h[':error-message']);
  try {
    message = str((JSON.parse(frame.payload.toString('utf8')) as Record<string, unknown>)['message']) || message;
  } catch {
    message ||= frame.payload.toString('utf8');
  }
  const type = str(h[':exception-type']) || str(h[':error-code']) || 'internalServerException';
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n`;
}

function frameToSse(bytes: Buffer, n: number): string {
  const frame = decodeFrame(bytes, n);
  const tag = `${TAG}${bytes.toString('base64')}\n`;
  const kind = frame.headers[':message-type'];
  if (kind === 'exception' || kind === 'error') return `${tag}${exceptionEvent(frame)}\n`;
  if (kind !== 'event' || frame.headers[':event-type'] !== 'chunk') return `${tag}\n`;
  let b64: string;
  try {
    b64 = str((JSON.parse(frame.payload.toString('utf8')) as Record<string, unknown>)['bytes']);
  } catch {
    throw new EventStreamError(`frame ${n}: a chunk whose payload is not JSON`);
  }
  const json = Buffer.from(b64, 'base64').toString('utf8');
  return `${tag}event: ${eventType(json)}\n${dataLines(json)}\n`;
}

/** Upstream eventstream bytes in, Anthropic SSE text out (frames of any split, CRCs checked). */
export class EventstreamToSse extends Transform {
  private readonly frames = new FrameSplitter();

  override _transform(chunk: unknown, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      const first = this.frames.count;
      const text = this.frames
        .push(toBuffer(chunk))
        .map((f, i) => frameToSse(f, first + i))
        .join('');
      if (text) this.push(text);
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      this.frames.end();
      done();
    } catch (err) {
      done(err as Error);
    }
  }
}

/** Anthropic error types as Bedrock's stream exceptions (what its SDKs raise by name). */
const EXCEPTION: Record<string, string> = {
  overloaded_error: 'serviceUnavailableException',
  rate_limit_error: 'throttlingException',
  invalid_request_error: 'validationException',
};

/**
 * A Bedrock stream exception frame: `{"message": …}` under `:exception-type`.
 * @internal exported for its test
 */
export function exceptionFrame(exceptionType: string, message: string): Buffer {
  return encodeFrame({
    headers: { ':exception-type': exceptionType, ':content-type': 'application/json', ':message-type': 'exception' },
    payload: Buffer.from(JSON.stringify({ message }), 'utf8'),
  });
}

/**
 * A chunk frame carrying one Anthropic event's JSON text.
 * @internal exported for its test
 */
export function chunkFrame(json: string): Buffer {
  const payload = JSON.stringify({ bytes: Buffer.from(json, 'utf8').toString('base64') });
  return encodeFrame({
    headers: { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
    payload: Buffer.from(payload, 'utf8'),
  });
}

/** The frame for one SSE event block (its lines, blank line excluded); null = nothing to send. */
function blockFrame(lines: readonly string[]): Buffer | null {
  const data: string[] = [];
  let event = '';
  for (const line of lines) {
    if (line.startsWith(TAG)) return Buffer.from(line.slice(TAG.length), 'base64');
    if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
    else if (line.startsWith('event:')) event = line.slice(6).trim();
  }
  if (data.length === 0) return null; // a keep-alive comment: the framing has none
  const json = data.join('\n');
  if (event !== 'error') return chunkFrame(json);
  let error: Record<string, unknown> = {};
  try {
    const e = (JSON.parse(json) as Record<string, unknown>)['error'];
    if (e && typeof e === 'object') error = e as Record<string, unknown>;
  } catch {
    // An error event that is not JSON still ends the stream as an exception.
  }
  return exceptionFrame(EXCEPTION[str(error['type'])] ?? 'internalServerException', str(error['message']) || json);
}

/** SSE text in, frames out, line by line (a block is framed once its blank line is in). */
class SseFramer {
  private carry = '';
  private block: string[] = [];

  push(text: string): Buffer[] {
    const lines = (this.carry + text).split('\n');
    this.carry = lines.pop() ?? '';
    return this.frames(lines);
  }

  end(): Buffer[] {
    const rest = this.carry;
    this.carry = '';
    return this.frames(rest ? [rest, ''] : ['']);
  }

  private frames(lines: readonly string[]): Buffer[] {
    const out: Buffer[] = [];
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line !== '') {
        this.block.push(line);
        continue;
      }
      const frame = this.block.length ? blockFrame(this.block) : null;
      this.block = [];
      if (frame) out.push(frame);
    }
    return out;
  }
}

/** Whole SSE text (a gateway-made error tail) as its frames. */
export function framesOfSse(text: string): Buffer {
  const f = new SseFramer();
  return Buffer.concat([...f.push(text), ...f.end()]);
}

/** Anthropic SSE text in (what the stitcher emits), eventstream frames out. */
export class SseToEventstream extends Transform {
  private readonly framer = new SseFramer();
  /** A character split across two chunks is decoded once whole. */
  private readonly utf8 = new StringDecoder('utf8');

  override _transform(chunk: unknown, _enc: BufferEncoding, done: TransformCallback): void {
    this.out(this.framer.push(this.utf8.write(toBuffer(chunk))));
    done();
  }

  override _flush(done: TransformCallback): void {
    const tail = this.utf8.end();
    this.out([...(tail ? this.framer.push(tail) : []), ...this.framer.end()]);
    done();
  }

  private out(frames: Buffer[]): void {
    if (frames.length) this.push(frames.length === 1 && frames[0] ? frames[0] : Buffer.concat(frames));
  }
}
