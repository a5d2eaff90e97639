// The bounded look at the start of an SSE response that decides whether the expand loop must
// intercept it. Only whole events inside the byte budget are judged; every byte read is handed
// back in order, and undecided streams (EOF, budget spent, read error) are never intercepted.
import type { Readable } from 'node:stream';
import { EXPAND_TOOL_NAME } from './expand-calls';
import type { Dialect } from './expand.types';
import { field, str } from './json-shape';
import { eventJson, SseDecoder, type SseEvent } from './sse-lines';

export type PeekVerdict = 'expand' | 'stream';
export type PeekReason = 'decided' | 'eof' | 'cap' | 'error';

export interface PeekResult {
  verdict: PeekVerdict;
  reason: PeekReason;
  /** Every chunk read from the upstream body so far, in arrival order. */
  consumed: Buffer[];
  /** The rest of the upstream body (continue reading here; do not re-iterate the Readable). */
  rest: AsyncIterator<unknown>;
  /** The upstream body has ended (or failed) already. */
  done: boolean;
  error?: unknown;
}

export function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError('upstream body yielded a non-byte chunk');
}

export interface PeekOptions {
  /**
   * Anthropic: look past leading thinking / redacted_thinking blocks (still within the byte budget)
   * and let the first block after them decide. With extended thinking on, every answer opens with
   * thinking, so deciding on it would let every expand call through to the client. Default true.
   */
  holdThinking?: boolean;
}

const THINKING = new Set(['thinking', 'redacted_thinking']);

/** Anthropic: the first content block decides; message_stop / error mean there is no expand call. */
export function classifyAnthropicEvent(json: unknown, holdThinking = true): PeekVerdict | null {
  const type = field(json, 'type');
  if (type === 'content_block_start') {
    const block = field(json, 'content_block');
    const blockType = field(block, 'type');
    if (holdThinking && typeof blockType === 'string' && THINKING.has(blockType)) return null;
    return blockType === 'tool_use' && field(block, 'name') === EXPAND_TOOL_NAME ? 'expand' : 'stream';
  }
  if (type === 'message_stop' || type === 'error') return 'stream';
  return null;
}

/** OpenAI: the first chunk that carries text, a tool call or a finish reason decides. */
export function classifyOpenAiEvent(ev: SseEvent, json: unknown): PeekVerdict | null {
  if (ev.data.trim() === '[DONE]') return 'stream';
  if (field(json, 'error') !== undefined) return 'stream';
  const choices = field(json, 'choices');
  const choice: unknown = Array.isArray(choices) ? choices[0] : undefined;
  if (choice === undefined) return null;
  const delta = field(choice, 'delta');
  const calls = field(delta, 'tool_calls');
  if (Array.isArray(calls) && calls.length > 0) {
    return str(field(field(calls[0], 'function'), 'name')) === EXPAND_TOOL_NAME ? 'expand' : 'stream';
  }
  if ((str(field(delta, 'content')) ?? '') !== '' || (str(field(delta, 'refusal')) ?? '') !== '') return 'stream';
  const finish = field(choice, 'finish_reason');
  return finish !== undefined && finish !== null ? 'stream' : null;
}

export async function peekSse(body: Readable, dialect: Dialect, limit: number, opts: PeekOptions = {}): Promise<PeekResult> {
  const holdThinking = opts.holdThinking ?? true;
  const classify = (ev: SseEvent): PeekVerdict | null => {
    const json = eventJson(ev);
    return dialect === 'anthropic' ? classifyAnthropicEvent(json, holdThinking) : classifyOpenAiEvent(ev, json);
  };
  const rest = body[Symbol.asyncIterator]() as AsyncIterator<unknown>;
  const consumed: Buffer[] = [];
  const decoder = new SseDecoder();
  let budget = limit;
  const result = (verdict: PeekVerdict, reason: PeekReason, done: boolean, error?: unknown): PeekResult =>
    error === undefined ? { verdict, reason, consumed, rest, done } : { verdict, reason, consumed, rest, done, error };

  for (;;) {
    let step: IteratorResult<unknown>;
    try {
      step = await rest.next();
    } catch (err) {
      return result('stream', 'error', true, err);
    }
    if (step.done) {
      // A final event without its blank line still counts (a truncated but decisive stream).
      for (const ev of decoder.end()) {
        const verdict = classify(ev);
        if (verdict) return result(verdict, 'decided', true);
      }
      return result('stream', 'eof', true);
    }
    const chunk = toBuffer(step.value);
    consumed.push(chunk);
    // Judge only bytes inside the budget; a chunk past it is kept (it was read) but not parsed.
    const judged = chunk.length > budget ? chunk.subarray(0, budget) : chunk;
    budget -= judged.length;
    for (const ev of decoder.push(judged)) {
      const verdict = classify(ev);
      if (verdict) return result(verdict, 'decided', false);
    }
    if (budget <= 0) return result('stream', 'cap', false);
  }
}

/** Reads everything after a peek; the returned bytes include the peeked ones. */
export async function drainPeek(peek: PeekResult): Promise<Buffer> {
  const parts = [...peek.consumed];
  if (!peek.done) {
    for (;;) {
      const step = await peek.rest.next();
      if (step.done) break;
      parts.push(toBuffer(step.value));
    }
  }
  return Buffer.concat(parts);
}
