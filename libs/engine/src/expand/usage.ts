// Token usage of a provider response, normalised to fresh / cache-read / cache-write / output.
// Streams report usage in pieces, so SSE usage is the per-field maximum over every usage event.
import type { Dialect, Usage } from './expand.types';
import { field, isObject, num, parseJson } from './json-shape';
import { eventJson, parseSseEvents, type SseEvent } from './sse-lines';

/**
 * Accepts a whole response or one SSE event payload: the usage object is `usage` (responses,
 * Anthropic message_delta, OpenAI final chunk), `message.usage` (Anthropic message_start) or
 * `response.usage` (the Responses API's response.completed / .incomplete / .failed events).
 */
export function parseUsage(dialect: Dialect, json: unknown): Usage | null {
  if (dialect === 'gemini') {
    const meta = field(json, 'usageMetadata');
    const usage = isObject(meta) ? geminiUsage(meta) : null;
    return usage && !isZero(usage) ? usage : null;
  }
  const u = field(json, 'usage') ?? field(field(json, dialect === 'responses' ? 'response' : 'message'), 'usage');
  if (!isObject(u)) return null;
  const usage = dialect === 'anthropic' ? anthropicUsage(u) : dialect === 'responses' ? responsesUsage(u) : openAiUsage(u);
  return isZero(usage) ? null : usage;
}

/** The member a dialect's usage object sits under (`usageMetadata` on Gemini). */
export function usageKey(dialect: Dialect): string {
  return dialect === 'gemini' ? 'usageMetadata' : 'usage';
}

/**
 * Gemini's usageMetadata: promptTokenCount includes the implicitly (or explicitly) cached
 * cachedContentTokenCount and the tool-use prompt is billed as input; thinking is billed as output.
 */
function geminiUsage(u: Record<string, unknown>): Usage {
  const cached = num(u['cachedContentTokenCount']);
  const prompt = num(u['promptTokenCount']) + num(u['toolUsePromptTokenCount']);
  return {
    fresh: Math.max(0, prompt - cached),
    cacheRead: cached,
    cacheWrite: 0,
    output: num(u['candidatesTokenCount']) + num(u['thoughtsTokenCount']),
  };
}

function anthropicUsage(u: Record<string, unknown>): Usage {
  // cache_creation_input_tokens is already the total; the per-TTL breakdown only counts when a
  // provider sends the breakdown alone, so take the larger instead of adding (no double count).
  const split = field(u, 'cache_creation');
  const splitTotal = num(field(split, 'ephemeral_5m_input_tokens')) + num(field(split, 'ephemeral_1h_input_tokens'));
  return {
    fresh: num(u['input_tokens']),
    cacheRead: num(u['cache_read_input_tokens']),
    cacheWrite: Math.max(num(u['cache_creation_input_tokens']), splitTotal),
    output: num(u['output_tokens']),
  };
}

function openAiUsage(u: Record<string, unknown>): Usage {
  const cached = num(field(field(u, 'prompt_tokens_details'), 'cached_tokens'));
  return {
    fresh: Math.max(0, num(u['prompt_tokens']) - cached),
    cacheRead: cached,
    cacheWrite: 0,
    output: num(u['completion_tokens']),
  };
}

/** Responses usage: input_tokens includes input_tokens_details.cached_tokens, as prompt_tokens does. */
function responsesUsage(u: Record<string, unknown>): Usage {
  const cached = num(field(field(u, 'input_tokens_details'), 'cached_tokens'));
  return { fresh: Math.max(0, num(u['input_tokens']) - cached), cacheRead: cached, cacheWrite: 0, output: num(u['output_tokens']) };
}

function isZero(u: Usage): boolean {
  return u.fresh === 0 && u.cacheRead === 0 && u.cacheWrite === 0 && u.output === 0;
}

function maxUsage(a: Usage | null, b: Usage | null): Usage | null {
  if (!a) return b;
  if (!b) return a;
  return {
    fresh: Math.max(a.fresh, b.fresh),
    cacheRead: Math.max(a.cacheRead, b.cacheRead),
    cacheWrite: Math.max(a.cacheWrite, b.cacheWrite),
    output: Math.max(a.output, b.output),
  };
}

/** The bill of several upstream calls (the stitched rounds of one client request). */
export function sumUsage(a: Usage | null, b: Usage | null): Usage | null {
  if (!a) return b;
  if (!b) return a;
  return {
    fresh: a.fresh + b.fresh,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    output: a.output + b.output,
  };
}

/**
 * Provider usage objects added field by field (numbers summed, nested objects recursed, anything
 * else from the later one), so a merged response reports what every round was billed.
 */
export function sumUsageJson(a: unknown, b: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = isObject(a) ? { ...a } : {};
  if (!isObject(b)) return out;
  for (const [k, v] of Object.entries(b)) {
    const prior = out[k];
    if (typeof v === 'number' && typeof prior === 'number') out[k] = prior + v;
    else if (isObject(v) && isObject(prior)) out[k] = sumUsageJson(prior, v);
    else if (v !== null && v !== undefined) out[k] = v;
  }
  return out;
}

/** Folds SSE events into one usage (per-field max); incremental so a relay can feed it as bytes pass. */
export class SseUsageAccumulator {
  usage: Usage | null = null;

  private readonly key: string;

  constructor(private readonly dialect: Dialect) {
    this.key = `"${usageKey(dialect)}"`;
  }

  add(ev: SseEvent): void {
    // Cheap pre-filter: most events are deltas without usage and are not worth a JSON parse.
    if (!ev.data.includes(this.key)) return;
    this.usage = maxUsage(this.usage, parseUsage(this.dialect, eventJson(ev)));
  }
}

/** @internal exported for tests */
export function parseSseUsage(dialect: Dialect, raw: Buffer | string): Usage | null {
  const acc = new SseUsageAccumulator(dialect);
  for (const ev of parseSseEvents(raw)) acc.add(ev);
  return acc.usage;
}

export function parseJsonUsage(dialect: Dialect, raw: Buffer | string): Usage | null {
  return parseUsage(dialect, parseJson(typeof raw === 'string' ? raw : raw.toString('utf8')));
}
