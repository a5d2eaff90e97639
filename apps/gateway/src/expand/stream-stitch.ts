// The expand loop over a stream: every upstream event is relayed as it arrives, except the
// context_guru_expand calls, which are withheld; when a round ends with expand calls and nothing
// the client must answer, the continuation is requested upstream and its events are relayed as
// more of the same message (one start, contiguous indices, one close with summed usage). The
// client never sees an expand call, and a client that goes away cancels whatever is in flight.
import { Readable } from 'node:stream';
import { saveTrail } from './answer-trail';
import {
  buildContinuation,
  resolveCalls,
  type ExpandBudget,
  continuable,
  splitCalls,
  type CallSplit,
  type CallUpstream,
  type Dialect,
  type ExpandHooks,
  type StreamOutcome,
  type UpstreamReply,
  isObject,
  parseJson,
  type JsonObject,
  SseLineSplitter,
  SseEventParser,
  type SseEvent,
  type AnswerRound,
} from '@context-guru/engine';
import { anthropicMessageToSse, openAiCompletionToSse } from './sse-synthesize';
import { AnthropicStitch } from './stitch-anthropic';
import { OpenAiStitch } from './stitch-openai';
import type { DialectStitch } from './stitch.types';
import { toBuffer } from './to-buffer';

const MAX_SSE_LINE = 1 << 20;

export interface StitchInput {
  dialect: Dialect;
  requestRaw: string;
  first: UpstreamReply;
  call: CallUpstream;
  hooks: ExpandHooks;
  maxRounds: number;
  /** What the answer's expand calls may add, across its rounds and its trail. */
  budget: ExpandBudget;
  isEventStream: (r: UpstreamReply) => boolean;
}

export interface Stitched {
  body: Readable;
  done: Promise<StreamOutcome>;
}

/** SSE events with the raw text that carried them (one line each, LF-terminated, blank line after). */
class RawEventDecoder {
  private readonly lines = new SseLineSplitter(MAX_SSE_LINE);
  private readonly parser = new SseEventParser();
  private raw: string[] = [];

  push(chunk: Buffer): Array<[SseEvent | null, string]> {
    return this.feed(this.lines.push(chunk));
  }

  end(): Array<[SseEvent | null, string]> {
    const last = this.lines.end();
    const out = this.feed(last === null ? [] : [last]);
    const open = this.parser.flush();
    if (open || this.raw.length) out.push([open, this.take()]);
    return out;
  }

  private feed(lines: string[]): Array<[SseEvent | null, string]> {
    const out: Array<[SseEvent | null, string]> = [];
    for (const line of lines) {
      this.raw.push(line);
      if (line !== '') {
        this.parser.pushLine(line);
        continue;
      }
      // A blank line ends an event; comment-only blocks (keep-alives) pass as they are.
      out.push([this.parser.pushLine(line), this.take()]);
    }
    return out;
  }

  private take(): string {
    const text = `${this.raw.join('\n')}\n`;
    this.raw = [];
    return text;
  }
}

async function readText(body: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(toBuffer(c));
  return Buffer.concat(parts).toString('utf8');
}

export function stitchStream(input: StitchInput): Stitched {
  const stitch: DialectStitch = input.dialect === 'anthropic' ? new AnthropicStitch() : new OpenAiStitch();
  let source: Readable = input.first.body;
  let requestRaw = input.requestRaw;
  let finished = false;
  let rounds = 0;
  let bytes = 0;
  /** The continued rounds so far, with the results they were answered with (the answer's trail). */
  const answered: AnswerRound[] = [];
  let settle!: (o: StreamOutcome) => void;
  const done = new Promise<StreamOutcome>((resolve) => (settle = resolve));
  const end = (extra: Partial<StreamOutcome>): void => {
    if (finished) return;
    finished = true;
    settle({ usage: stitch.usage(), expandAfterStream: false, bytes, rounds, ...extra });
  };

  // Push-based: each upstream chunk is rewritten in one synchronous callback and pushed, and the
  // upstream is paused while the client is not reading (backpressure).
  const body = new Readable({
    read() {
      if (source.isPaused()) source.resume();
    },
    destroy(err, cb) {
      // The client went away (or the relay failed): release whatever upstream call is in flight.
      if (!source.destroyed) source.destroy();
      end(failure !== undefined ? { error: failure } : { aborted: true });
      cb(err);
    },
  });
  const send = (text: string): boolean => {
    if (!text || finished) return true;
    const buf = Buffer.from(text, 'utf8');
    bytes += buf.length;
    return body.push(buf);
  };
  const emit = (pairs: Array<[SseEvent | null, string]>): string => pairs.map(([ev, raw]) => (ev ? stitch.event(ev, raw) : raw)).join('');
  const finish = (text: string): void => {
    send(text);
    end({});
    body.push(null);
  };
  let failure: unknown;
  const fail = (err: unknown): void => {
    if (finished) return;
    failure = err;
    body.destroy(err instanceof Error ? err : new Error(String(err)));
  };

  function relay(src: Readable): void {
    source = src;
    const decoder = new RawEventDecoder();
    src.on('data', (chunk: unknown) => {
      if (!send(emit(decoder.push(toBuffer(chunk))))) src.pause();
    });
    src.once('error', fail);
    src.once('end', () => {
      send(emit(decoder.end()));
      roundEnded().catch(fail);
    });
  }

  /** Closes the message, or asks upstream for the continuation and relays it as more of it. */
  async function roundEnded(): Promise<void> {
    if (finished) return;
    if (stitch.errored) return finish('');
    const turn = stitch.withheld > 0 || rounds > 0 ? stitch.turn() : null;
    const calls: CallSplit | null = turn && stitch.withheld > 0 ? splitCalls(input.dialect, turn) : null;
    if (!turn || !calls || !continuable(calls) || rounds >= input.maxRounds) return close(turn);
    const results = await resolveCalls(calls.expand, input.hooks, input.budget);
    if (finished) return; // the client went away while the originals were looked up: ask nothing more
    const next = buildContinuation(input.dialect, requestRaw, { json: turn }, results);
    if (next === null) return close(turn);
    answered.push({ turn: { json: turn }, results });
    requestRaw = next;
    input.hooks.onContinue?.(stitch.usage());
    rounds++;
    stitch.nextRound();
    let cont: Readable | string;
    try {
      cont = await continuationBody(await input.call(next));
    } catch (err) {
      if (finished) return; // the client went away and took the call with it
      send(stitch.error(502, ''));
      end({ error: err });
      body.push(null);
      return;
    }
    if (finished) {
      if (typeof cont !== 'string') cont.destroy();
      return;
    }
    if (typeof cont === 'string') return finish(cont);
    relay(cont);
  }

  /** The last round is over: its trail is saved, then the message is closed for the client. */
  async function close(turn: JsonObject | null): Promise<void> {
    if (turn) await saveTrail(input.dialect, answered, { json: turn }, input.hooks, input.budget);
    if (!finished) finish(stitch.close(stitch.withheld > 0));
  }

  /** A continuation reply as a stream body: SSE as it is, a whole JSON answer rendered as SSE. */
  async function continuationBody(reply: UpstreamReply): Promise<Readable | string> {
    const ok = reply.status >= 200 && reply.status < 300;
    if (ok && input.isEventStream(reply)) return reply.body;
    const text = await readText(reply.body);
    const json = parseJson(text);
    if (!ok || !isObject(json)) return stitch.error(reply.status, text);
    return Readable.from([Buffer.from(input.dialect === 'anthropic' ? anthropicMessageToSse(json) : openAiCompletionToSse(json), 'utf8')]);
  }

  relay(source);
  return { body, done };
}
