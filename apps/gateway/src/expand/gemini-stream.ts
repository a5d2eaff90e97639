// A Gemini stream (streamGenerateContent) on a request that offers the expand tool, relayed live
// and stitched. Each chunk goes on as it arrives, its data as received, except that the
// context_guru_expand functionCall parts are taken out of it (a chunk left with nothing to show is
// dropped) and the chunk carrying the round's finishReason is held: with expand calls and nothing
// for the client to answer, the gateway continues upstream and relays the continuation's chunks
// after the first round's, their usageMetadata counting every round, and the client gets one
// finishReason. A client that asked for the JSON-array form gets these chunks as that array.
import type { PassThrough } from 'node:stream';
import {
  buildGeminiContinuation,
  chunkJson,
  contentParts,
  continuable,
  ExpandBudget,
  field,
  isExpandPart,
  isObject,
  parseUsage,
  resolveCalls,
  SseDecoder,
  splitCalls,
  sumUsage,
  sumUsageJson,
  type ClientReply,
  type ExpandLoopOptions,
  type JsonObject,
  type StreamOutcome,
  type UpstreamReply,
  type Usage,
} from '@context-guru/engine';
import { stitchedReply } from './stitched-reply';
import { toBuffer } from './to-buffer';

/** Writes chunks in the client's framing: SSE events, or the elements of one JSON array. */
class ChunkWriter {
  private count = 0;

  constructor(
    private readonly out: PassThrough,
    private readonly jsonArray: boolean,
  ) {}

  write(data: string): void {
    if (!this.jsonArray) return void this.out.write(`data: ${data}\r\n\r\n`);
    this.out.write(`${this.count++ === 0 ? '[' : '\r\n,'}${data}`);
  }

  end(): void {
    this.out.end(this.jsonArray ? (this.count === 0 ? '[]' : '\r\n]') : undefined);
  }
}

/** Text parts that may be joined: plain (or plain thought) text, no signature, nothing else. */
function joinable(part: unknown): boolean {
  if (!isObject(part) || typeof part['text'] !== 'string') return false;
  return Object.keys(part).every((k) => k === 'text' || (k === 'thought' && part['thought'] === true));
}

/** The round's parts as one content: streamed text pieces joined, every other part as it came. */
function joinParts(parts: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const part of parts) {
    const prev = out.at(-1);
    if (joinable(part) && joinable(prev) && isObject(part) && isObject(prev) && part['thought'] === prev['thought']) {
      out[out.length - 1] = { ...prev, text: `${String(prev['text'])}${String(part['text'])}` };
    } else out.push(part);
  }
  return out;
}

/** A chunk with its first candidate's parts replaced (and usage / finish state adjusted). */
function withParts(chunk: JsonObject, parts: unknown[], usage: unknown, finish: boolean): JsonObject {
  const candidates = Array.isArray(chunk['candidates']) ? (chunk['candidates'] as unknown[]) : [];
  const first: JsonObject = isObject(candidates[0]) ? { ...candidates[0] } : {};
  first['content'] = { ...(isObject(first['content']) ? first['content'] : { role: 'model' }), parts };
  if (!finish) delete first['finishReason'];
  const out: JsonObject = { ...chunk, candidates: [first, ...candidates.slice(1)] };
  if (usage === undefined) delete out['usageMetadata'];
  else out['usageMetadata'] = usage;
  return out;
}

interface Round {
  /** Every part of the round, in order (expand calls included). */
  parts: unknown[];
  /** The chunk that carried finishReason, held back, and its data as received. */
  held: JsonObject | null;
  heldData: string;
  /** The round's last usageMetadata. */
  usage: unknown;
}

/** usageMetadata of this round as the client sees it: every earlier round's added. */
const shownUsage = (before: JsonObject | null, own: unknown): unknown => (before && isObject(own) ? sumUsageJson(before, own) : own);

async function relayRound(body: UpstreamReply['body'], w: ChunkWriter, before: JsonObject | null): Promise<Round> {
  const decoder = new SseDecoder();
  const round: Round = { parts: [], held: null, heldData: '', usage: undefined };
  const handle = (data: string): void => {
    const chunk = chunkJson(data);
    if (!chunk) return void w.write(data);
    const parts = contentParts(chunk);
    round.parts.push(...parts);
    if (chunk['usageMetadata'] !== undefined) round.usage = chunk['usageMetadata'];
    const candidates = chunk['candidates'];
    if (Array.isArray(candidates) && field(candidates[0], 'finishReason') !== undefined) {
      round.held = chunk;
      round.heldData = data;
      return;
    }
    const visible = parts.filter((p) => !isExpandPart(p));
    if (visible.length === parts.length && before === null) return void w.write(data);
    if (visible.length === 0 && parts.length > 0) return;
    w.write(JSON.stringify(withParts(chunk, visible, shownUsage(before, chunk['usageMetadata']), false)));
  };
  for await (const c of body) for (const ev of decoder.push(toBuffer(c))) handle(ev.data);
  for (const ev of decoder.end()) handle(ev.data);
  return round;
}

export function geminiStreamLoop(o: ExpandLoopOptions, maxRounds: number): ClientReply {
  const headers: ClientReply['headers'] = Object.fromEntries(
    Object.entries(o.first.headers).filter(([k]) => k.toLowerCase() !== 'content-length' && k.toLowerCase() !== 'content-type'),
  );
  headers['content-type'] = o.jsonArray ? 'application/json; charset=UTF-8' : 'text/event-stream';
  return stitchedReply(o.first.status, headers, (out) => stitch(o, maxRounds, out));
}

async function stitch(o: ExpandLoopOptions, maxRounds: number, out: PassThrough): Promise<StreamOutcome> {
  const w = new ChunkWriter(out, o.jsonArray === true);
  const budget = new ExpandBudget(o.limits);
  let requestRaw = o.requestRaw;
  let upstream: UpstreamReply = o.first;
  let usage: Usage | null = null;
  /** usageMetadata of the rounds before the current one, summed (null in the first round). */
  let before: JsonObject | null = null;
  let rounds = 0;
  let bytes = 0;
  out.on('data', (c: Buffer) => (bytes += c.length));
  try {
    for (;;) {
      const round = await relayRound(upstream.body, w, before);
      const turn: JsonObject = { candidates: [{ content: { role: 'model', parts: joinParts(round.parts) } }] };
      usage = sumUsage(usage, parseUsage('gemini', { usageMetadata: round.usage }));
      const calls = splitCalls('gemini', turn);
      const hid = calls.expand.length > 0;
      if (continuable(calls) && rounds < maxRounds) {
        const results = await resolveCalls(calls.expand, o.hooks, budget);
        const next = buildGeminiContinuation(requestRaw, { json: turn }, results);
        if (next !== null) {
          o.hooks.onContinue?.(usage);
          const continued = await o.call(next);
          if (continued.status >= 200 && continued.status < 300) {
            // The held chunk's own text is still the client's; its finish and usage are not.
            const shown = round.held ? contentParts(round.held).filter((p) => !isExpandPart(p)) : [];
            if (round.held && shown.length) w.write(JSON.stringify(withParts(round.held, shown, undefined, false)));
            before = isObject(round.usage) ? sumUsageJson(before ?? {}, round.usage) : before;
            requestRaw = next;
            upstream = continued;
            rounds++;
            continue;
          }
          continued.body.resume();
        }
      }
      if (round.held) {
        const shown = contentParts(round.held).filter((p) => !isExpandPart(p));
        const untouched = !hid && before === null;
        w.write(untouched ? round.heldData : JSON.stringify(withParts(round.held, shown, shownUsage(before, round.usage), true)));
      }
      w.end();
      return { usage, expandAfterStream: false, bytes, rounds };
    }
  } catch (error) {
    out.destroy(error instanceof Error ? error : new Error(String(error)));
    return { usage, expandAfterStream: false, bytes, rounds, error };
  }
}
