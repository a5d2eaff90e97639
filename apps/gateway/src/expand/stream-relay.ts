// Relays an upstream body to the client chunk by chunk (never held back) while watching it on the
// side: usage for accounting and mentions of the expand tool. Watching costs bounded memory whatever
// the stream's length.
import type { Readable } from 'node:stream';
import {
  EXPAND_TOOL_NAME,
  type Dialect,
  type StreamOutcome,
  type Usage,
  parseJson,
  valueAt,
  SseDecoder,
  parseJsonUsage,
  parseUsage,
  SseUsageAccumulator,
  usageKey,
} from '@context-guru/engine';
import { toBuffer } from './to-buffer';

const MAX_SSE_LINE = 1 << 20;
const JSON_WHOLE_LIMIT = 1 << 20;
const JSON_TAIL = 64 * 1024;
const NAME = Buffer.from(EXPAND_TOOL_NAME, 'utf8');

/**
 * Usage from the tail of a JSON body too large to keep whole: the last `"usage": {…}` in it.
 * @internal exported for tests
 */
export function usageFromJsonTail(dialect: Dialect, tail: string): Usage | null {
  const key = usageKey(dialect);
  const at = tail.lastIndexOf(`"${key}"`);
  if (at < 0) return null;
  const colon = tail.indexOf(':', at + key.length + 2);
  const span = colon < 0 ? null : valueAt(tail, colon + 1);
  return span ? parseUsage(dialect, { [key]: parseJson(tail.slice(span.start, span.end)) }) : null;
}

/**
 * Usage of a whole JSON answer without parsing all of it: providers put `usage` after the content,
 * so the last `"usage"` key is read first; only when that is not a usage object (an odd upstream)
 * is the whole body parsed.
 */
function usageOfWholeJson(dialect: Dialect, body: Buffer): Usage | null {
  const at = body.lastIndexOf(`"${usageKey(dialect)}"`);
  if (at < 0) return null;
  return usageFromJsonTail(dialect, body.subarray(at).toString('utf8')) ?? parseJsonUsage(dialect, body);
}

const EMPTY = Buffer.alloc(0);

/** The SSE side of a watched stream: its events, read for usage. */
interface SseWatch {
  decoder: SseDecoder;
  usage: SseUsageAccumulator;
}

class StreamObserver {
  bytes = 0;
  mentioned = false;
  private readonly sse: SseWatch | null;
  private carry = EMPTY;
  private jsonParts: Buffer[] | null = [];
  private jsonTail = EMPTY;

  constructor(
    private readonly dialect: Dialect,
    sse: boolean,
    private readonly watchName: boolean,
  ) {
    this.sse = sse ? { decoder: new SseDecoder(MAX_SSE_LINE), usage: new SseUsageAccumulator(dialect) } : null;
  }

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.watchName && !this.mentioned) this.watch(chunk);
    if (this.sse) {
      for (const ev of this.sse.decoder.push(chunk)) this.sse.usage.add(ev);
      return;
    }
    if (this.jsonParts && this.bytes <= JSON_WHOLE_LIMIT) {
      this.jsonParts.push(chunk);
      return;
    }
    const joined = Buffer.concat(this.jsonParts ? [...this.jsonParts, chunk] : [this.jsonTail, chunk]);
    this.jsonParts = null;
    this.jsonTail = joined.subarray(Math.max(0, joined.length - JSON_TAIL));
  }

  finish(): Usage | null {
    if (this.sse) {
      for (const ev of this.sse.decoder.end()) this.sse.usage.add(ev);
      return this.sse.usage.usage;
    }
    const parts = this.jsonParts;
    if (parts) return usageOfWholeJson(this.dialect, parts.length === 1 && parts[0] ? parts[0] : Buffer.concat(parts));
    return usageFromJsonTail(this.dialect, this.jsonTail.toString('utf8'));
  }

  private watch(chunk: Buffer): void {
    // The name may straddle two chunks: look at the previous chunk's last bytes joined to this one.
    const seam = Buffer.concat([this.carry, chunk.subarray(0, NAME.length - 1)]);
    if (seam.includes(NAME) || chunk.includes(NAME)) this.mentioned = true;
    const tail = Buffer.concat([this.carry, chunk]);
    this.carry = tail.subarray(Math.max(0, tail.length - (NAME.length - 1)));
  }
}

export interface RelayInput {
  source: Readable;
  dialect: Dialect;
  sse: boolean;
  watchName: boolean;
}

export interface Relay {
  body: Readable;
  done: Promise<StreamOutcome>;
}

/**
 * The relay for a body the expand loop does not intercept (the common case): the upstream body
 * itself goes to the client, watched by a listener beside the pipe — no stream in between, so a
 * chunk costs one synchronous callback and no extra ticks. It stays paused until the pipe starts it
 * (a listener alone would start the flow before the client side is attached).
 */
export function observeStream(input: RelayInput): Relay {
  const observer = new StreamObserver(input.dialect, input.sse, input.watchName);
  const source = input.source;
  let settled = false;
  let settle!: (o: StreamOutcome) => void;
  const done = new Promise<StreamOutcome>((resolve) => (settle = resolve));
  const finish = (extra: Partial<StreamOutcome>) => {
    if (settled) return;
    settled = true;
    settle({ usage: observer.finish(), expandAfterStream: observer.mentioned, bytes: observer.bytes, ...extra });
  };
  source.on('data', (chunk: unknown) => observer.add(toBuffer(chunk)));
  source.pause();
  // `on`, not `once` (no wrapper per listener): finish settles once whichever comes first.
  source.on('end', () => finish({}));
  source.on('error', (err: unknown) => finish({ error: err }));
  // A client that goes away destroys the body (HotReply.send), which releases the upstream socket.
  source.on('close', () => finish({ aborted: true }));
  return { body: source, done };
}
