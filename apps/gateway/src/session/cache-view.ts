// The provider-cache view of one turn: which messages the provider already holds in its prompt
// cache (and so must never change), and whether that cache has provably expired.
import type { CacheView, TurnRecord } from '@context-guru/components';
import type { CacheMode } from '../env';

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

/** The cache TTL this request asks for: Anthropic 1 h when any breakpoint says so, else 5 min. */
export function requestTtlMs(dialect: 'openai' | 'anthropic', raw: string): number {
  if (dialect === 'openai') return ONE_HOUR;
  return /"ttl"\s*:\s*"1h"/.test(raw) ? ONE_HOUR : FIVE_MINUTES;
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
