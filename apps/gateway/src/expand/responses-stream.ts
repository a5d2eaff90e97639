// A Responses API event stream on an advertised request. Every Responses stream ends with a
// terminal event (response.completed / .incomplete / .failed) that carries the whole response,
// output items included, so the loop reads each round's stream whole and works on that response:
// a stream without an expand call goes to the client as the very bytes the provider sent; one with
// calls is continued upstream and the client gets one stream synthesized from the merged response —
// one response.created, the visible items at consecutive output_index with their deltas, one
// sequence_number run, usage summed — in which no context_guru_expand call appears.
// The price is that an advertised stream reaches the client when it is complete (docs/responses.md).
import { Readable } from 'node:stream';
import { saveTrail } from './answer-trail';
import { ExpandBudget, resolveCalls } from './continuation';
import type { AnswerRound } from './trail';
import { continuable, splitCalls } from './expand-calls';
import type { ClientReply, ExpandLoopOptions, StreamOutcome, UpstreamReply, Usage } from './expand.types';
import { field, isObject, str, type JsonObject } from './json-shape';
import { buildResponsesContinuation, mergeResponses } from './responses-expand';
import { eventJson, parseSseEvents } from './sse-lines';
import { toBuffer } from './to-buffer';
import { parseUsage, sumUsage } from './usage';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

async function readAll(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(toBuffer(chunk));
  return Buffer.concat(parts);
}

/** The response a stream's terminal event carries, or null (an error event, a cut stream). */
function terminalResponse(bytes: Buffer): JsonObject | null {
  const events = parseSseEvents(bytes);
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i];
    const json = ev ? eventJson(ev) : undefined;
    if (TERMINAL.has(String(field(json, 'type'))) && isObject(field(json, 'response'))) return field(json, 'response') as JsonObject;
  }
  return null;
}

/** The event stream of one whole response, as the API streams it. */
function responseToSse(response: JsonObject): string {
  let seq = 0;
  const out: string[] = [];
  const emit = (type: string, data: JsonObject) =>
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const output = Array.isArray(response['output']) ? response['output'].filter(isObject) : [];
  const shell: JsonObject = { ...response, status: 'in_progress', output: [] };
  delete shell['usage'];
  emit('response.created', { response: shell });
  emit('response.in_progress', { response: shell });
  output.forEach((item, i) => {
    const itemId = item['id'];
    emit('response.output_item.added', { output_index: i, item: addedItem(item) });
    if (item['type'] === 'message' && Array.isArray(item['content'])) {
      item['content'].filter(isObject).forEach((part, k) => {
        const at = { item_id: itemId, output_index: i, content_index: k };
        emit('response.content_part.added', { ...at, part: { ...part, text: '' } });
        const text = str(part['text']);
        if (part['type'] === 'output_text' && text) emit('response.output_text.delta', { ...at, delta: text, logprobs: [] });
        if (part['type'] === 'output_text') emit('response.output_text.done', { ...at, text: text ?? '', logprobs: [] });
        emit('response.content_part.done', { ...at, part });
      });
    } else if (item['type'] === 'function_call') {
      const args = str(item['arguments']) ?? '';
      emit('response.function_call_arguments.delta', { item_id: itemId, output_index: i, delta: args });
      emit('response.function_call_arguments.done', { item_id: itemId, output_index: i, arguments: args });
    } else if (item['type'] === 'custom_tool_call') {
      const input = str(item['input']) ?? '';
      emit('response.custom_tool_call_input.delta', { item_id: itemId, output_index: i, delta: input });
      emit('response.custom_tool_call_input.done', { item_id: itemId, output_index: i, input });
    }
    emit('response.output_item.done', { output_index: i, item });
  });
  const status = str(response['status']) ?? 'completed';
  emit(status === 'incomplete' ? 'response.incomplete' : status === 'failed' ? 'response.failed' : 'response.completed', { response });
  return out.join('');
}

/** An item as announced before its deltas: text and arguments still empty. */
function addedItem(item: JsonObject): JsonObject {
  if (item['type'] === 'message') return { ...item, status: 'in_progress', content: [] };
  if (item['type'] === 'function_call') return { ...item, status: 'in_progress', arguments: '' };
  if (item['type'] === 'custom_tool_call') return { ...item, status: 'in_progress', input: '' };
  return item;
}

function streamReply(first: UpstreamReply, body: Buffer, rounds: number, usage: Usage | null): ClientReply {
  const outcome: StreamOutcome = { usage, expandAfterStream: false, bytes: body.length, rounds };
  const headers = Object.fromEntries(Object.entries(first.headers).filter(([k]) => k.toLowerCase() !== 'content-length'));
  return {
    status: first.status,
    headers,
    body: Readable.from([body]),
    mode: 'buffered',
    rounds,
    usage,
    usageDone: Promise.resolve(usage),
    streamDone: Promise.resolve(outcome),
  };
}

export async function responsesStreamLoop(o: ExpandLoopOptions, maxRounds: number): Promise<ClientReply> {
  let requestRaw = o.requestRaw;
  let reply = o.first;
  const turns: JsonObject[] = [];
  const rounds: AnswerRound[] = [];
  // Calls per round and bytes of originals per answer, as on the other routes (EXPAND_* limits).
  const budget = new ExpandBudget(o.limits);
  for (;;) {
    const bytes = await readAll(reply.body);
    const response = reply.status >= 200 && reply.status < 300 ? terminalResponse(bytes) : null;
    // Nothing we can read (an error, a cut stream) goes to the client as it came.
    if (!response) return streamReply(o.first, bytes, turns.length, null);
    const calls = splitCalls('responses', response);
    if (turns.length === 0 && calls.expand.length === 0) return streamReply(o.first, bytes, 0, parseUsage('responses', response));
    turns.push(response);
    if (continuable(calls) && turns.length <= maxRounds) {
      const results = await resolveCalls(calls.expand, o.hooks, budget);
      const next = buildResponsesContinuation(requestRaw, { json: response }, results);
      if (next !== null) {
        rounds.push({ turn: { json: response }, results });
        requestRaw = next;
        o.hooks.onContinue?.(turns.reduce<Usage | null>((sum, t) => sumUsage(sum, parseUsage('responses', t)), null));
        reply = await o.call(next);
        continue;
      }
    }
    await saveTrail('responses', rounds, { json: response }, o.hooks, budget);
    const merged = mergeResponses(turns);
    return streamReply(o.first, Buffer.from(responseToSse(merged), 'utf8'), turns.length - 1, parseUsage('responses', merged));
  }
}
