// The host side of context_guru_expand: the model's expand calls are answered by the gateway
// (≤ maxRounds continuations), wherever in the response they come, and the client only ever sees
// one answer without them. Streams are stitched as they arrive (stream-stitch.ts); whole JSON
// answers are merged (merge-turns.ts). What is not intercepted reaches the client untouched.
import type { Readable } from 'node:stream';
import { headerValue } from '../http/forward-headers';
import { saveTrail } from './answer-trail';
import {
  buildContinuation,
  ExpandBudget,
  resolveCalls,
  continuable,
  splitCalls,
  type ClientReply,
  type ExpandLoopOptions,
  type StreamOutcome,
  type UpstreamReply,
  type Usage,
  isObject,
  parseJson,
  type JsonObject,
  type AnswerRound,
  parseUsage,
  sumUsage,
} from '@context-guru/engine';
import { mergeTurns } from './merge-turns';
import { observeStream, type Relay } from './stream-relay';
import { responsesStreamLoop } from './responses-stream';
import { geminiStreamLoop } from './gemini-stream';
import { stitchStream } from './stream-stitch';
import { toBuffer } from './to-buffer';

export type * from '@context-guru/engine';

const DEFAULT_MAX_ROUNDS = 3;

type Headers = UpstreamReply['headers'];

export function isEventStream(headers: Headers): boolean {
  return (headerValue(headers, 'content-type') ?? '').toLowerCase().includes('event-stream');
}

/** A compressed body cannot be read for expand calls; it is left to the client as-is. */
function isEncoded(headers: Headers): boolean {
  const enc = (headerValue(headers, 'content-encoding') ?? '').trim().toLowerCase();
  return enc !== '' && enc !== 'identity';
}

async function readAll(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(toBuffer(chunk));
  return Buffer.concat(parts);
}

function withoutHeaders(headers: Headers, names: readonly string[]): Headers {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k.toLowerCase())));
}

function bufferReply(reply: UpstreamReply, body: Buffer, rounds: number, usage: Usage | null, headers = reply.headers): ClientReply {
  const outcome: StreamOutcome = { usage, expandAfterStream: false, bytes: body.length, rounds };
  return {
    status: reply.status,
    headers,
    body,
    mode: 'json',
    rounds,
    usage,
    usageDone: Promise.resolve(usage),
    streamDone: Promise.resolve(outcome),
  };
}

function relayReply(reply: UpstreamReply, relay: Relay, rounds: number): ClientReply {
  const out: ClientReply = {
    status: reply.status,
    headers: reply.headers,
    body: relay.body,
    mode: isEventStream(reply.headers) ? 'streamed' : 'json',
    rounds,
    usage: null,
    // Asked for by few callers: no promise made for it on every relayed answer.
    get usageDone() {
      return relay.done.then((d) => d.usage);
    },
    streamDone: relay.done.then((d) => {
      out.usage = d.usage;
      out.expandAfterStream = d.expandAfterStream;
      out.rounds = d.rounds ?? rounds;
      return d;
    }),
  };
  return out;
}

/** Not intercepted: relayed as it comes, watched for usage (and, on an advertised 2xx stream we could not read, for the tool's name). */
function passThrough(reply: UpstreamReply, o: ExpandLoopOptions): ClientReply {
  const sse = isEventStream(reply.headers);
  const watchName = o.advertised && sse && reply.status >= 200 && reply.status < 300;
  const out = relayReply(reply, observeStream({ source: reply.body, dialect: o.dialect, sse, watchName }), 0);
  if (!sse) out.keepsLength = true;
  return out;
}

/**
 * A 2xx JSON answer up to this size (declared, uncompressed) is read whole before it is relayed,
 * so one that is not JSON is answered as a gateway error instead of a 200 no SDK can parse. A
 * bigger, chunked or compressed one is relayed as it streams: its declared type is checked only.
 */
const HELD_JSON_BYTES = 1 << 20;

function heldWhole(reply: UpstreamReply): boolean {
  if (isEventStream(reply.headers) || isEncoded(reply.headers)) return false;
  const declared = Number(headerValue(reply.headers, 'content-length') ?? NaN);
  return declared >= 0 && declared <= HELD_JSON_BYTES;
}

/** Read whole (see HELD_JSON_BYTES), relayed as the buffer it was. */
async function held(reply: UpstreamReply, dialect: ExpandLoopOptions['dialect']): Promise<ClientReply> {
  const raw = await readAll(reply.body);
  const json = parseJson(raw.toString('utf8'));
  // The buffer is the upstream's bytes unchanged, so its declared length still holds.
  return { ...bufferReply(reply, raw, 0, isObject(json) ? parseUsage(dialect, json) : null), keepsLength: true };
}

export async function runExpandLoop(o: ExpandLoopOptions): Promise<ClientReply> {
  const maxRounds = o.maxRounds ?? DEFAULT_MAX_ROUNDS;
  const first = o.first;
  const ok = first.status >= 200 && first.status < 300;
  if (!o.advertised || !ok || isEncoded(first.headers)) return ok && heldWhole(first) ? held(first, o.dialect) : passThrough(first, o);
  if (isEventStream(first.headers)) {
    if (o.dialect === 'responses') return responsesStreamLoop(o, maxRounds);
    if (o.dialect === 'gemini') return geminiStreamLoop(o, maxRounds);
    const stitched = stitchStream({
      dialect: o.dialect,
      requestRaw: o.requestRaw,
      first,
      call: o.call,
      hooks: o.hooks,
      maxRounds,
      budget: new ExpandBudget(o.limits),
      isEventStream: (r) => isEventStream(r.headers),
    });
    const headers = withoutHeaders(first.headers, ['content-length']);
    return relayReply({ ...first, headers }, stitched, 0);
  }
  return jsonLoop(o, maxRounds);
}

/** Whole JSON answers: continue while the model only asks for originals, then merge the rounds. */
async function jsonLoop(o: ExpandLoopOptions, maxRounds: number): Promise<ClientReply> {
  let requestRaw = o.requestRaw;
  let reply = o.first;
  const turns: JsonObject[] = [];
  const rounds: AnswerRound[] = [];
  const budget = new ExpandBudget(o.limits);
  for (;;) {
    const raw = await readAll(reply.body);
    const text = raw.toString('utf8');
    const json = parseJson(text);
    const ok = reply.status >= 200 && reply.status < 300;
    // An answer we cannot read (or an upstream error on a continuation) goes back as it came.
    if (!ok || !isObject(json)) return bufferReply(reply, raw, turns.length, isObject(json) ? parseUsage(o.dialect, json) : null);
    const calls = splitCalls(o.dialect, json);
    if (turns.length === 0 && calls.expand.length === 0) return bufferReply(reply, raw, 0, parseUsage(o.dialect, json));
    turns.push(json);
    if (continuable(calls) && turns.length <= maxRounds) {
      const results = await resolveCalls(calls.expand, o.hooks, budget);
      const next = buildContinuation(o.dialect, requestRaw, { json, raw: text }, results);
      if (next !== null) {
        rounds.push({ turn: { json, raw: text }, results });
        requestRaw = next;
        o.hooks.onContinue?.(turns.reduce<Usage | null>((sum, t) => sumUsage(sum, parseUsage(o.dialect, t)), null));
        reply = await o.call(next);
        continue;
      }
    }
    await saveTrail(o.dialect, rounds, { json, raw: text }, o.hooks, budget);
    const merged = mergeTurns(o.dialect, turns);
    const headers = withoutHeaders(reply.headers, ['content-length']);
    return bufferReply(reply, Buffer.from(JSON.stringify(merged), 'utf8'), turns.length - 1, parseUsage(o.dialect, merged), headers);
  }
}
