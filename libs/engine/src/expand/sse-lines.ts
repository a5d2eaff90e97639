// SSE framing over raw bytes: lines are cut at the byte level (LF, CRLF or a lone CR, even when a
// terminator straddles two chunks) and only decoded once whole, so a UTF-8 character split across
// chunks is never mangled.
export interface SseEvent {
  event: string;
  data: string;
}

const LF = 0x0a;
const CR = 0x0d;

export class SseLineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private skipLeadingLf = false;
  /** Bytes dropped from an over-long line (see maxLineBytes). */
  dropped = 0;

  /** maxLineBytes bounds memory on a stream that never ends a line; the excess is discarded. */
  constructor(private readonly maxLineBytes = Number.POSITIVE_INFINITY) {}

  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    if (this.skipLeadingLf && chunk.length > 0) {
      if (chunk[0] === LF) start = 1;
      this.skipLeadingLf = false;
    }
    for (let i = start; i < chunk.length; i++) {
      const b = chunk[i];
      if (b !== LF && b !== CR) continue;
      this.keep(chunk.subarray(start, i));
      lines.push(this.take());
      if (b === CR) {
        if (i + 1 < chunk.length) {
          if (chunk[i + 1] === LF) i++;
        } else {
          this.skipLeadingLf = true;
        }
      }
      start = i + 1;
    }
    this.keep(chunk.subarray(start));
    return lines;
  }

  /** The unterminated last line, if any. */
  end(): string | null {
    if (this.pendingBytes === 0) return null;
    return this.take();
  }

  private keep(part: Buffer): void {
    if (part.length === 0) return;
    const room = this.maxLineBytes - this.pendingBytes;
    if (room <= 0) {
      this.dropped += part.length;
      return;
    }
    const kept = part.length > room ? part.subarray(0, room) : part;
    this.dropped += part.length - kept.length;
    this.pending.push(kept);
    this.pendingBytes += kept.length;
  }

  private take(): string {
    const [only, ...more] = this.pending;
    const line = only && more.length === 0 ? only.toString('utf8') : Buffer.concat(this.pending).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    return line;
  }
}

/** Assembles lines into events per the EventSource rules (comments, `field: value`, data joins). */
export class SseEventParser {
  private event = '';
  private data: string[] = [];

  pushLine(line: string): SseEvent | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    return null;
  }

  /** An event left open at EOF (no closing blank line); lenient callers still look at it. */
  flush(): SseEvent | null {
    return this.dispatch();
  }

  private dispatch(): SseEvent | null {
    const out = this.data.length > 0 ? { event: this.event || 'message', data: this.data.join('\n') } : null;
    this.event = '';
    this.data = [];
    return out;
  }
}

/** Incremental bytes → events. */
export class SseDecoder {
  private readonly lines: SseLineSplitter;
  private readonly parser = new SseEventParser();

  constructor(maxLineBytes?: number) {
    this.lines = new SseLineSplitter(maxLineBytes);
  }

  push(chunk: Buffer): SseEvent[] {
    const out: SseEvent[] = [];
    for (const line of this.lines.push(chunk)) {
      const ev = this.parser.pushLine(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const last = this.lines.end();
    if (last !== null) {
      const ev = this.parser.pushLine(last);
      if (ev) out.push(ev);
    }
    const open = this.parser.flush();
    if (open) out.push(open);
    return out;
  }
}

export function parseSseEvents(raw: Buffer | string): SseEvent[] {
  const dec = new SseDecoder();
  return [...dec.push(typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw), ...dec.end()];
}

/** The JSON payload of an event, or undefined when it is not JSON (e.g. OpenAI's `[DONE]`). */
export function eventJson(ev: SseEvent): unknown {
  const d = ev.data.trim();
  if (d === '' || (d[0] !== '{' && d[0] !== '[')) return undefined;
  try {
    return JSON.parse(d) as unknown;
  } catch {
    return undefined;
  }
}
