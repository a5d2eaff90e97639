// A Responses API event stream on an advertised request, relayed live and stitched. Each event is
// passed on as it arrives (its data as received while nothing needs renumbering) except the events
// of a context_guru_expand call, which the client never sees, and the round's terminal event
// (response.completed / .incomplete / .failed), which carries the whole response and is held: with
// expand calls and nothing for the client to answer, the gateway continues upstream and relays the
// continuation's events after the first round's — no second response.created, output_index values
// consecutive over the visible items, one sequence_number run — and the one terminal event the
// client gets carries every round's visible items and the summed usage.
import type { PassThrough, Readable } from 'node:stream';
import { saveTrail } from './answer-trail';
import {
  ExpandBudget,
  resolveCalls,
  continuable,
  splitCalls,
  type ClientReply,
  type ExpandLoopOptions,
  type StreamOutcome,
  type UpstreamReply,
  type Usage,
  field,
  isObject,
  type JsonObject,
  buildResponsesContinuation,
  isExpandItem,
  mergeResponses,
  eventJson,
  SseDecoder,
  type SseEvent,
  type AnswerRound,
  parseUsage,
  sumUsage,
} from '@context-guru/engine';
import { stitchedReply } from './stitched-reply';
import { toBuffer } from './to-buffer';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const OPENING = new Set(['response.created', 'response.in_progress']);

/** What one round's relay learned: its terminal response (null: the stream ended without one). */
interface RoundEnd {
  terminal: { type: string; json: JsonObject; data: string } | null;
  /** Expand items were dropped from this round's events. */
  hid: boolean;
}

/** The client's view of the stitched stream: one sequence_number run, output_index over visible items. */
class ClientSequence {
  private seq = 0;
  private nextIndex = 0;
  private indices = new Map<number, number>();

  constructor(private readonly out: PassThrough) {}

  newRound(): void {
    this.indices = new Map();
  }

  /** The next sequence number (the terminal event, written by the caller). */
  take(): number {
    return this.seq++;
  }

  /** Writes the event, renumbered; its received data when that already holds the numbers. */
  write(ev: SseEvent, json: JsonObject | undefined): void {
    if (!json) return void this.out.write(frame(ev.event, ev.data));
    const seq = this.seq++;
    let changed = json['sequence_number'] !== seq;
    const copy: JsonObject = { ...json, sequence_number: seq };
    const at = json['output_index'];
    if (typeof at === 'number') {
      const mapped = this.indexOf(at);
      if (mapped !== at) changed = true;
      copy['output_index'] = mapped;
    }
    this.out.write(frame(ev.event, changed ? JSON.stringify(copy) : ev.data));
  }

  private indexOf(upstream: number): number {
    let mapped = this.indices.get(upstream);
    if (mapped === undefined) this.indices.set(upstream, (mapped = this.nextIndex++));
    return mapped;
  }
}

function frame(event: string, data: string): string {
  return `${event === 'message' ? '' : `event: ${event}\n`}data: ${data}\n\n`;
}

/** Relays one round's events; expand items and (after the first round) the opening events are dropped. */
async function relayRound(body: Readable, first: boolean, seq: ClientSequence): Promise<RoundEnd> {
  const decoder = new SseDecoder();
  const hidden = new Set<number>();
  const end: RoundEnd = { terminal: null, hid: false };
  const handle = (ev: SseEvent): void => {
    const json = eventJson(ev);
    const obj = isObject(json) ? json : undefined;
    const type = String(field(obj, 'type') ?? ev.event);
    if (TERMINAL.has(type) && isObject(field(obj, 'response'))) {
      end.terminal = { type, json: field(obj, 'response') as JsonObject, data: ev.data };
      return;
    }
    if (!first && OPENING.has(type)) return;
    const at = field(obj, 'output_index');
    if (typeof at === 'number') {
      if (type === 'response.output_item.added' && isExpandItem(field(obj, 'item'))) hidden.add(at);
      if (hidden.has(at)) return void (end.hid = true);
    }
    seq.write(ev, obj);
  };
  for await (const chunk of body) for (const ev of decoder.push(toBuffer(chunk))) handle(ev);
  for (const ev of decoder.end()) handle(ev);
  return end;
}

function terminalFrame(type: string, response: JsonObject, seq: number): string {
  return frame(type, JSON.stringify({ type, sequence_number: seq, response }));
}

export function responsesStreamLoop(o: ExpandLoopOptions, maxRounds: number): ClientReply {
  const headers = Object.fromEntries(Object.entries(o.first.headers).filter(([k]) => k.toLowerCase() !== 'content-length'));
  return stitchedReply(o.first.status, headers, (out) => stitch(o, maxRounds, out));
}

async function stitch(o: ExpandLoopOptions, maxRounds: number, out: PassThrough): Promise<StreamOutcome> {
  const seq = new ClientSequence(out);
  const budget = new ExpandBudget(o.limits);
  const turns: JsonObject[] = [];
  const rounds: AnswerRound[] = [];
  let requestRaw = o.requestRaw;
  let upstream: UpstreamReply = o.first;
  let bytes = 0;
  out.on('data', (c: Buffer) => (bytes += c.length));
  try {
    for (;;) {
      seq.newRound();
      const end = await relayRound(upstream.body, turns.length === 0, seq);
      if (!end.terminal) break; // a cut stream: what arrived went on, nothing to add
      const response = end.terminal.json;
      const calls = splitCalls('responses', response);
      turns.push(response);
      if (continuable(calls) && turns.length <= maxRounds) {
        const results = await resolveCalls(calls.expand, o.hooks, budget);
        const next = buildResponsesContinuation(requestRaw, { json: response }, results);
        if (next !== null) {
          rounds.push({ turn: { json: response }, results });
          requestRaw = next;
          o.hooks.onContinue?.(turns.reduce<Usage | null>((sum, t) => sumUsage(sum, parseUsage('responses', t)), null));
          const continued = await o.call(next);
          if (continued.status >= 200 && continued.status < 300) {
            upstream = continued;
            continue;
          }
          continued.body.resume();
        }
      }
      await saveTrail('responses', rounds, { json: response }, o.hooks, budget);
      const merged = turns.length > 1 || end.hid || calls.expand.length ? mergeResponses(turns) : response;
      // The last event goes out as received when nothing was stitched into it.
      const text =
        merged === response && !end.hid
          ? frame(end.terminal.type, end.terminal.data)
          : terminalFrame(end.terminal.type, merged, seq.take());
      out.end(text);
      return { usage: parseUsage('responses', merged), expandAfterStream: false, bytes, rounds: turns.length - 1 };
    }
    out.end();
    return { usage: null, expandAfterStream: false, bytes, rounds: Math.max(0, turns.length - 1) };
  } catch (error) {
    out.destroy(error instanceof Error ? error : new Error(String(error)));
    return { usage: null, expandAfterStream: false, bytes, rounds: Math.max(0, turns.length - 1), error };
  }
}
