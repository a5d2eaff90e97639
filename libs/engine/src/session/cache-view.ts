// The provider-cache view of one turn: which messages the provider already holds in its prompt
// cache (and so must never change), and whether that cache has provably expired.
import { isObject, type CacheView, type Dialect, type TurnRecord } from '@context-guru/components';
import type { CacheMode } from '../engine.types';

const FIVE_MINUTES = 5 * 60_000;
const ONE_HOUR = 60 * 60_000;
const COLD_MARGIN_MS = 60_000;

/**
 * auto: every provider we front caches prompt prefixes — Anthropic with breakpoints, OpenAI
 * automatically — so rewriting an already-sent message would bust a cache on both.
 */
export function isCacheAware(mode: CacheMode): boolean {
  return mode !== 'off';
}

/**
 * The cache TTL this request asks for: Anthropic 1 h when any structural breakpoint (system, tools,
 * message, content block, tool_result part) says `ttl: "1h"`, else 5 min; OpenAI (both APIs) 1 h; Gemini
 * 1 h (its implicit cache publishes no lifetime: the longest one cold cache may assume is the safe one). Structural on
 * purpose: a tool call's input or a tool schema carrying `"ttl": "1h"` must not stretch the TTL,
 * since the widening is monotonic and would keep the conversation from ever reading cold.
 * `mentionsOneHour`: the body's text contains "1h" anywhere (a cheap pre-filter the decode keeps).
 */
export function requestTtlMs(dialect: Dialect, body: unknown, mentionsOneHour: boolean): number {
  if (dialect !== 'anthropic') return ONE_HOUR;
  if (!mentionsOneHour || !isObject(body)) return FIVE_MINUTES;
  return asksOneHour(body) ? ONE_HOUR : FIVE_MINUTES;
}

function oneHour(carrier: unknown): boolean {
  return isObject(carrier) && isObject(carrier.cache_control) && carrier.cache_control.ttl === '1h';
}

function anyOneHour(list: unknown): boolean {
  return Array.isArray(list) && list.some(oneHour);
}

function asksOneHour(body: Record<string, unknown>): boolean {
  if (anyOneHour(body.system) || anyOneHour(body.tools)) return true;
  const messages = body.messages;
  if (!Array.isArray(messages)) return false;
  for (const m of messages) {
    if (!isObject(m)) continue;
    if (oneHour(m)) return true;
    if (!Array.isArray(m.content)) continue;
    for (const block of m.content) {
      if (oneHour(block)) return true;
      if (isObject(block) && block.type === 'tool_result' && anyOneHour(block.content)) return true;
    }
  }
  return false;
}

export interface TurnCache {
  view: CacheView;
  compactionReset: boolean;
  ttlMs: number;
}

export function cacheViewFor(prev: TurnRecord | null, n: number, aware: boolean, now: number, ttlMs: number): TurnCache {
  const widened = Math.max(ttlMs, prev?.ttlMs ?? 0);
  if (!aware || !prev) return { view: { aware, maxCachedIdx: -1, cold: false }, compactionReset: false, ttlMs: widened };
  const compactionReset = n < prev.n;
  const boundary = compactionReset ? 0 : prev.n;
  // No recorded previous turn always reads warm (handled above): a wrong cold reading re-bills
  // the whole suffix as a cache write.
  const idle = now - prev.at;
  const cold = prev.at > 0 && idle > 0 && idle >= widened + COLD_MARGIN_MS;
  return { view: { aware, maxCachedIdx: boundary - 1, cold }, compactionReset, ttlMs: widened };
}
