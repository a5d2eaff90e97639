// Realistic provider SSE streams (event order, field sets and delta sizes as the Anthropic Messages
// and OpenAI Chat Completions APIs send them) plus fake upstream replies over them. Written
// independently of the gateway's own SSE code so tests do not grade it against itself.
import { Readable } from 'node:stream';
import type { UpstreamReply } from '../../libs/engine/src/expand/expand.types';

export const ANTHROPIC_MODEL = 'claude-sonnet-4-6';
export const OPENAI_MODEL = 'gpt-4o-2024-08-06';
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
const JSON_HEADERS = { 'content-type': 'application/json' };

interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

export interface StreamOptions {
  id?: string;
  usage?: Partial<AnthropicUsage>;
}

/** Model-sized pieces: a few words at a time, as providers emit deltas. */
function pieces(text: string, size = 12): string[] {
  const out: string[] = [];
  const chars = [...text];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out.length ? out : [''];
}

const ev = (type: string, data: object): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

export type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

function anthropicBlockEvents(index: number, b: AnthropicBlock): string {
  const delta = (d: object): string => ev('content_block_delta', { index, delta: d });
  let out = '';
  switch (b.type) {
    case 'text':
      out += ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      if (index === 0) out += 'event: ping\ndata: {"type": "ping"}\n\n';
      for (const p of pieces(b.text)) out += delta({ type: 'text_delta', text: p });
      break;
    case 'thinking':
      out += ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const p of pieces(b.thinking)) out += delta({ type: 'thinking_delta', thinking: p });
      out += delta({ type: 'signature_delta', signature: b.signature });
      break;
    case 'redacted_thinking':
      out += ev('content_block_start', { index, content_block: b });
      break;
    case 'tool_use': {
      out += ev('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      out += delta({ type: 'input_json_delta', partial_json: '' });
      for (const p of pieces(JSON.stringify(b.input), 7)) out += delta({ type: 'input_json_delta', partial_json: p });
      break;
    }
  }
  return out + ev('content_block_stop', { index });
}

export function anthropicSse(blocks: AnthropicBlock[], o: StreamOptions = {}): string {
  const usage = { input_tokens: 2095, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1, ...o.usage };
  const stop = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  let out = ev('message_start', {
    message: {
      id: o.id ?? 'msg_01XFDUDYJgAACzvnptvVoYEL',
      type: 'message',
      role: 'assistant',
      model: ANTHROPIC_MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1, service_tier: 'standard' },
    },
  });
  blocks.forEach((b, i) => (out += anthropicBlockEvents(i, b)));
  out += ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: o.usage?.output_tokens ?? 87 } });
  return out + ev('message_stop', {});
}

export function anthropicTextSse(text: string, o: StreamOptions = {}): string {
  return anthropicSse([{ type: 'text', text }], o);
}

export function expandToolUse(id: string, n = 0): AnthropicBlock {
  return { type: 'tool_use', id: `toolu_01Expand${n}Q8ZbM3kHk9x`, name: 'context_guru_expand', input: { id } };
}

/** The model asks for originals (one tool_use per id), optionally after some words. */
export function anthropicExpandSse(ids: string[], o: StreamOptions & { lead?: string } = {}): string {
  const lead: AnthropicBlock[] = o.lead ? [{ type: 'text', text: o.lead }] : [];
  return anthropicSse([...lead, ...ids.map((id, n) => expandToolUse(id, n))], o);
}

export const SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds4sVw8lI8Jf/wWv7nQzXrBXs4T0V3B2DZ8pfNn1Bc0sl==';

export function anthropicThinkingTextSse(thinking: string, text: string, o: StreamOptions = {}): string {
  return anthropicSse(
    [
      { type: 'thinking', thinking, signature: SIGNATURE },
      { type: 'text', text },
    ],
    o,
  );
}

export interface OpenAiStreamOptions {
  id?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number } | null;
}

export interface OpenAiCall {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

export function openAiSse(content: string | null, calls: OpenAiCall[], o: OpenAiStreamOptions = {}): string {
  const usageOn = o.usage !== null;
  const head = {
    id: o.id ?? 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion.chunk',
    created: 1741569952,
    model: OPENAI_MODEL,
    service_tier: 'default',
    system_fingerprint: 'fp_eb9dce56a8',
  };
  const chunk = (delta: object, finish: string | null = null): string =>
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(usageOn ? { usage: null } : {}) })}\n\n`;
  let out = '';
  if (content !== null) {
    out += chunk({ role: 'assistant', content: '', refusal: null });
    for (const p of pieces(content, 6)) out += chunk({ content: p });
  }
  calls.forEach((c, index) => {
    const open = { index, id: c.id ?? `call_${index}DhGwnZ2Kq7sL1xY4bT0pR`, type: 'function', function: { name: c.name, arguments: '' } };
    out +=
      index === 0 && content === null
        ? chunk({ role: 'assistant', content: null, tool_calls: [open], refusal: null })
        : chunk({ tool_calls: [open] });
    for (const p of pieces(JSON.stringify(c.args), 5)) out += chunk({ tool_calls: [{ index, function: { arguments: p } }] });
  });
  out += chunk({}, calls.length ? 'tool_calls' : 'stop');
  if (usageOn) {
    const u = o.usage ?? { prompt_tokens: 1843, completion_tokens: 64, cached_tokens: 1024 };
    const usage = {
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
      total_tokens: u.prompt_tokens + u.completion_tokens,
      prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    };
    out += `data: ${JSON.stringify({ ...head, choices: [], usage })}\n\n`;
  }
  return out + 'data: [DONE]\n\n';
}

export function openAiTextSse(text: string, o: OpenAiStreamOptions = {}): string {
  return openAiSse(text, [], o);
}

export function openAiExpandSse(ids: string[], o: OpenAiStreamOptions = {}): string {
  return openAiSse(
    null,
    ids.map((id, n) => ({ id: `call_Expand${n}Zq4WmT8`, name: 'context_guru_expand', args: { id } })),
    o,
  );
}

/** Byte chunks of `body`, cut every `size` bytes (small odd sizes split lines and UTF-8 characters). */
export function chunked(body: string | Buffer, size: number): Buffer[] {
  const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

/** Cuts `body` at the given byte offsets. */
export function cutAt(body: string | Buffer, offsets: number[]): Buffer[] {
  const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const points = [0, ...offsets.filter((n) => n > 0 && n < buf.length).sort((a, b) => a - b), buf.length];
  return points.slice(1).map((end, i) => buf.subarray(points[i], end));
}

export interface FakeReplyOptions {
  status?: number;
  headers?: Record<string, string>;
  /** Chunk size; the default cuts every 7 bytes. */
  chunk?: number;
}

function fakeReply(body: string | Buffer | Buffer[], o: FakeReplyOptions = {}): UpstreamReply {
  const parts = Array.isArray(body) ? body : chunked(body, o.chunk ?? 7);
  // Object mode keeps every chunk boundary exactly as given (a byte-mode stream may merge them).
  return { status: o.status ?? 200, headers: o.headers ?? SSE_HEADERS, body: Readable.from(parts) };
}

export function sseReply(body: string, o: Omit<FakeReplyOptions, 'headers'> = {}): UpstreamReply {
  return fakeReply(body, { ...o, headers: SSE_HEADERS });
}

export function jsonReply(body: string | object, o: Omit<FakeReplyOptions, 'headers'> = {}): UpstreamReply {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return fakeReply(text, { chunk: 64, ...o, headers: JSON_HEADERS });
}

export async function readBody(body: Readable | Buffer): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
  return Buffer.concat(parts);
}
