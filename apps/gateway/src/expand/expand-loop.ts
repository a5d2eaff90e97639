// The host side of context_guru_expand: when the model answers with nothing but expand calls, the
// loop resolves them and asks again (≤ maxRounds continuations), so the client only ever sees the
// final answer. Everything it does not intercept reaches the client untouched and unbuffered.
import type { Readable } from 'node:stream';
import { buildContinuation, resolveCalls, type ModelTurn } from './continuation';
import { findExpandCalls } from './expand-calls';
import type { ClientReply, ExpandLoopOptions, ReplyMode, StreamOutcome, UpstreamReply, Usage } from './expand.types';
import { isObject, parseJson } from './json-shape';
import { aggregateSse } from './sse-aggregate';
import { drainPeek, peekSse, toBuffer, type PeekResult } from './sse-peek';
import { anthropicMessageToSse, openAiCompletionToSse } from './sse-synthesize';
import { observeStream, relayStream } from './stream-relay';
import { parseSseUsage, parseUsage } from './usage';

export type * from './expand.types';
export { parseUsage } from './usage';

export const DEFAULT_MAX_ROUNDS = 3;
export const DEFAULT_PEEK_LIMIT = 64 * 1024;

type Headers = UpstreamReply['headers'];

export function headerValue(headers: Headers, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(', ') : v;
  }
  return undefined;
}

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

interface LoopState {
  rounds: number;
  buffered: boolean;
  /** The client's first answer was a stream, so it expects one to the end. */
  clientSse: boolean;
}

function mode(state: LoopState, sse: boolean): ReplyMode {
  if (state.buffered) return 'buffered';
  return sse ? 'streamed' : 'json';
}

function bufferReply(reply: UpstreamReply, body: Buffer, m: ReplyMode, state: LoopState, usage: Usage | null, headers = reply.headers): ClientReply {
  const outcome: StreamOutcome = { usage, expandAfterStream: false, bytes: body.length };
  return { status: reply.status, headers, body, mode: m, rounds: state.rounds, usage, usageDone: Promise.resolve(usage), streamDone: Promise.resolve(outcome) };
}

/** Streams an upstream body to the client (after any peeked bytes) and fills in usage at its end. */
function streamReply(reply: UpstreamReply, state: LoopState, o: ExpandLoopOptions, peek: PeekResult | null): ClientReply {
  const sse = isEventStream(reply.headers);
  // Only a 2xx stream on an advertised request can carry an expand call the client then sees.
  const watchName = o.advertised && sse && reply.status >= 200 && reply.status < 300;
  const relay = !peek
    ? observeStream({ source: reply.body, dialect: o.dialect, sse, watchName })
    : relayStream({
        prefix: peek.consumed,
        rest: peek.done ? null : peek.rest,
        pendingError: peek.error,
        source: reply.body,
        dialect: o.dialect,
        sse,
        watchName,
      });
  const done = relay.done.then((d) => {
    out.usage = d.usage;
    out.expandAfterStream = d.expandAfterStream;
    return d;
  });
  const out: ClientReply = {
    status: reply.status,
    headers: reply.headers,
    body: relay.body,
    mode: mode(state, sse),
    rounds: state.rounds,
    usage: null,
    usageDone: done.then((d) => d.usage),
    streamDone: done,
  };
  return out;
}

/**
 * A whole JSON answer handed back. After a continuation of a streamed request it is rendered as
 * the stream the client asked for; otherwise its bytes go back verbatim.
 */
function jsonReply(reply: UpstreamReply, raw: Buffer, json: unknown, state: LoopState, o: ExpandLoopOptions): ClientReply {
  const usage = parseUsage(o.dialect, json);
  if (state.clientSse && state.rounds > 0 && isObject(json)) {
    const sse = o.dialect === 'anthropic' ? anthropicMessageToSse(json) : openAiCompletionToSse(json);
    const headers = { ...withoutHeaders(reply.headers, ['content-type', 'content-length']), 'content-type': 'text/event-stream; charset=utf-8' };
    return bufferReply(reply, Buffer.from(sse, 'utf8'), 'buffered', state, usage, headers);
  }
  return bufferReply(reply, raw, mode(state, false), state, usage);
}

export async function runExpandLoop(o: ExpandLoopOptions): Promise<ClientReply> {
  const maxRounds = o.maxRounds ?? DEFAULT_MAX_ROUNDS;
  const peekLimit = o.peekLimit ?? DEFAULT_PEEK_LIMIT;
  const state: LoopState = { rounds: 0, buffered: false, clientSse: isEventStream(o.first.headers) };
  let requestRaw = o.requestRaw;
  let reply = o.first;

  for (;;) {
    const sse = isEventStream(reply.headers);
    const ok = reply.status >= 200 && reply.status < 300;
    const mustRender = ok && !sse && state.clientSse && state.rounds > 0;
    const intercept = o.advertised && ok && state.rounds < maxRounds && !isEncoded(reply.headers);
    if (!intercept && !mustRender) return streamReply(reply, state, o, null);

    let turn: ModelTurn;
    let replay: () => ClientReply;
    if (sse) {
      const peek = await peekSse(reply.body, o.dialect, peekLimit, { holdThinking: o.holdThinking ?? true });
      if (peek.verdict === 'stream') return streamReply(reply, state, o, peek);
      state.buffered = true;
      const raw = await drainPeek(peek);
      const replied = reply;
      replay = () => bufferReply(replied, raw, 'buffered', state, parseSseUsage(o.dialect, raw));
      const json = aggregateSse(o.dialect, raw);
      if (!json) return replay();
      turn = { json };
    } else {
      const raw = await readAll(reply.body);
      const text = raw.toString('utf8');
      const json = parseJson(text);
      const replied = reply;
      replay = () => jsonReply(replied, raw, json, state, o);
      if (json === undefined || !intercept) return replay();
      turn = { json, raw: text };
    }

    const scan = findExpandCalls(o.dialect, turn.json);
    if (scan.kind !== 'expand') return replay();
    const results = await resolveCalls(scan.calls, o.hooks);
    // Nothing resolved: another round would only repeat the question, so the model's turn stands.
    if (!results.some((r) => r.resolved)) return replay();
    const next = buildContinuation(o.dialect, requestRaw, turn, results);
    if (next === null) return replay();
    requestRaw = next;
    state.rounds++;
    reply = await o.call(next);
  }
}
