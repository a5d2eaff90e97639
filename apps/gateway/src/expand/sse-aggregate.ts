// Rebuilds the non-streaming response a buffered SSE stream stands for, so the expand loop can
// treat both transports alike. Anything it cannot rebuild faithfully (no message_start, no block,
// truncated tool input, an error event, several choices) yields null and the raw bytes are replayed.
import { type Dialect, field, isObject, num, str, type JsonObject, eventJson, parseSseEvents, type SseEvent } from '@context-guru/engine';

/** @internal exported for tests */
export function aggregateSse(dialect: Dialect, raw: Buffer | string): JsonObject | null {
  const events = parseSseEvents(raw);
  return dialect === 'anthropic' ? aggregateAnthropic(events) : aggregateOpenAi(events);
}

interface OpenBlock {
  block: JsonObject;
  partialJson: string | null;
}

/** Copies only the non-null fields, so a later usage report cannot erase an earlier count. */
function mergeDefined(into: JsonObject, from: unknown): JsonObject {
  if (isObject(from)) for (const [k, v] of Object.entries(from)) if (v !== null && v !== undefined) into[k] = v;
  return into;
}

function applyAnthropicDelta(open: OpenBlock, delta: unknown): void {
  const b = open.block;
  switch (field(delta, 'type')) {
    case 'text_delta':
      b['text'] = (str(b['text']) ?? '') + (str(field(delta, 'text')) ?? '');
      break;
    case 'input_json_delta':
      open.partialJson = (open.partialJson ?? '') + (str(field(delta, 'partial_json')) ?? '');
      break;
    case 'thinking_delta':
      b['thinking'] = (str(b['thinking']) ?? '') + (str(field(delta, 'thinking')) ?? '');
      break;
    case 'signature_delta':
      // The signature is what makes a thinking block valid in the continuation request.
      b['signature'] = str(field(delta, 'signature')) ?? b['signature'];
      break;
    case 'citations_delta': {
      const prior = Array.isArray(b['citations']) ? (b['citations'] as unknown[]) : [];
      b['citations'] = [...prior, field(delta, 'citation')];
      break;
    }
    default:
      break;
  }
}

export function aggregateAnthropic(events: readonly SseEvent[]): JsonObject | null {
  let message: JsonObject | null = null;
  const blocks: Array<OpenBlock | undefined> = [];
  for (const ev of events) {
    const json = eventJson(ev);
    const type = field(json, 'type');
    if (type === 'error') return null;
    if (type === 'message_start') {
      const m = field(json, 'message');
      if (!isObject(m)) return null;
      message = { ...m, usage: mergeDefined({}, m['usage']) };
    } else if (type === 'content_block_start') {
      const start = field(json, 'content_block');
      if (!isObject(start)) return null;
      blocks[num(field(json, 'index'))] = { block: structuredClone(start), partialJson: null };
    } else if (type === 'content_block_delta') {
      const open = blocks[num(field(json, 'index'))];
      if (!open) return null;
      applyAnthropicDelta(open, field(json, 'delta'));
    } else if (type === 'message_delta' && message) {
      mergeDefined(message, field(json, 'delta'));
      message['usage'] = mergeDefined(isObject(message['usage']) ? message['usage'] : {}, field(json, 'usage'));
    }
  }
  const present = blocks.filter((b): b is OpenBlock => b !== undefined);
  if (!message || present.length === 0) return null;
  const content: JsonObject[] = [];
  for (const open of present) {
    const block = closeBlock(open);
    if (!block) return null;
    content.push(block);
  }
  message['content'] = content;
  return message;
}

/** A streamed block as the non-streaming answer holds it: tool input parsed from its JSON pieces; null when they do not parse. */
function closeBlock(open: OpenBlock): JsonObject | null {
  if (open.partialJson !== null) {
    if (open.partialJson.trim() === '') open.block['input'] = {};
    else {
      try {
        open.block['input'] = JSON.parse(open.partialJson) as unknown;
      } catch {
        return null;
      }
    }
  } else if ((open.block['type'] === 'tool_use' || open.block['type'] === 'server_tool_use') && !isObject(open.block['input'])) {
    open.block['input'] = {};
  }
  return open.block;
}

interface OpenToolCall {
  index: number;
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

/** The one choice of an OpenAI stream, as its deltas add up. */
interface ChoiceSoFar {
  role: string;
  content: string;
  refusal: string;
  finish: unknown;
  calls: Map<number, OpenToolCall>;
}

export function aggregateOpenAi(events: readonly SseEvent[]): JsonObject | null {
  let head: JsonObject | null = null;
  let choice: ChoiceSoFar | null = null;
  let usage: unknown;
  for (const ev of events) {
    const json = eventJson(ev);
    if (!isObject(json)) continue;
    if (json['error'] !== undefined) return null;
    head ??= {
      id: json['id'],
      created: json['created'],
      model: json['model'],
      system_fingerprint: json['system_fingerprint'],
      service_tier: json['service_tier'],
    };
    if (isObject(json['usage'])) usage = json['usage'];
    const choices = json['choices'];
    if (!Array.isArray(choices)) continue;
    for (const c of choices) {
      // n > 1 cannot be continued as one conversation: leave such streams to the client.
      if (num(field(c, 'index')) !== 0) return null;
      choice ??= { role: 'assistant', content: '', refusal: '', finish: null, calls: new Map() };
      addChoiceDelta(choice, c);
    }
  }
  if (!head || !choice) return null;
  return completion(head, choice, usage);
}

function addChoiceDelta(acc: ChoiceSoFar, choice: unknown): void {
  const delta = field(choice, 'delta');
  acc.role = str(field(delta, 'role')) ?? acc.role;
  acc.content += str(field(delta, 'content')) ?? '';
  acc.refusal += str(field(delta, 'refusal')) ?? '';
  const deltaCalls = field(delta, 'tool_calls');
  if (Array.isArray(deltaCalls)) for (const tc of deltaCalls) mergeToolCall(acc.calls, tc);
  const f = field(choice, 'finish_reason');
  if (f !== null && f !== undefined) acc.finish = f;
}

/** The chat.completion object the stream adds up to. */
function completion(head: JsonObject, choice: ChoiceSoFar, usage: unknown): JsonObject {
  const message: JsonObject = { role: choice.role, content: choice.content === '' ? null : choice.content };
  if (choice.refusal !== '') message['refusal'] = choice.refusal;
  if (choice.calls.size > 0) {
    message['tool_calls'] = [...choice.calls.values()]
      .sort((a, b) => a.index - b.index)
      .map((c) => ({ id: c.id, type: c.type, function: c.function }));
  }
  const out: JsonObject = { id: head['id'], object: 'chat.completion', created: head['created'], model: head['model'] };
  out['choices'] = [{ index: 0, message, logprobs: null, finish_reason: choice.finish }];
  if (usage !== undefined) out['usage'] = usage;
  for (const k of ['system_fingerprint', 'service_tier']) if (head[k] !== undefined && head[k] !== null) out[k] = head[k];
  return out;
}

function mergeToolCall(calls: Map<number, OpenToolCall>, tc: unknown): void {
  const index = num(field(tc, 'index'));
  let call = calls.get(index);
  if (!call) {
    call = { index, id: '', type: 'function', function: { name: '', arguments: '' } };
    calls.set(index, call);
  }
  call.id = str(field(tc, 'id')) ?? call.id;
  call.type = str(field(tc, 'type')) ?? call.type;
  const fn = field(tc, 'function');
  // The name arrives whole in the call's first chunk; arguments arrive in pieces.
  call.function.name = str(field(fn, 'name')) ?? call.function.name;
  call.function.arguments += str(field(fn, 'arguments')) ?? '';
}
