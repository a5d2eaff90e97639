// Prices a turn. Two figures, kept apart so neither flatters the other:
// - billed: what the provider reported billing, per usage kind at the family's rate;
// - saved (gross): the tokens the pipeline removed from the prompt, priced at the rate the
//   provider would have billed them on THIS turn — removed inside the cached prefix at the
//   cache-read rate when the turn read its cache (else like the tail), removed in the tail at the
//   cache-write rate when the turn wrote its cache (Anthropic), else at the fresh-input rate.
// Net saving = gross − what the gateway itself caused to be billed (expand round trips, compaction
// model calls). A turn the provider reported no usage for prices no saving (it was not billed).
import { messageTokens, type Dialect, type Message } from '@context-guru/components';
import type { Usage } from '../expand/expand.types';
import type { FamilyPrice } from './price-table';

export type UsageKind = 'fresh' | 'cache_read' | 'cache_write' | 'output';
export const USAGE_KINDS: readonly UsageKind[] = ['fresh', 'cache_read', 'cache_write', 'output'];

const PER_TOKEN = 1e-6;

export function usageByKind(u: Usage): Record<UsageKind, number> {
  return { fresh: u.fresh, cache_read: u.cacheRead, cache_write: u.cacheWrite, output: u.output };
}

/** USD the provider billed for one response's usage. */
export function billedUsd(u: Usage, p: FamilyPrice): number {
  return (u.fresh * p.input + u.cacheWrite * p.cache_write + u.cacheRead * p.cache_read + u.output * p.output) * PER_TOKEN;
}

export interface SavedSplit {
  /** Tokens removed from messages inside the provider-cached prefix (replayed decisions). */
  prefix: number;
  /** Tokens removed from the uncached tail (this turn's new decisions, or all when cold). */
  tail: number;
}

export interface SavedValue {
  prefixUsd: number;
  tailUsd: number;
  /** The rates used, per million tokens, so a reader can check the figure. */
  prefixRate: number;
  tailRate: number;
}

/** The money value of the removed tokens on a turn the provider billed with `usage`. */
export function savedUsd(dialect: Dialect, saved: SavedSplit, usage: Usage, p: FamilyPrice): SavedValue {
  // OpenAI bills a cache write as plain input; Anthropic charges the write premium on what it anchors.
  const tailRate = dialect === 'anthropic' && usage.cacheWrite > 0 ? p.cache_write : p.input;
  const prefixRate = usage.cacheRead > 0 ? p.cache_read : tailRate;
  return {
    prefixUsd: saved.prefix * prefixRate * PER_TOKEN,
    tailUsd: saved.tail * tailRate * PER_TOKEN,
    prefixRate,
    tailRate,
  };
}

/**
 * Tokens removed per message that actually went out rewritten, split at the cache boundary
 * (`maxCachedIdx` −1 = nothing cached or cache cold). Token counts are memoised by content, so
 * this re-measures only the rewritten messages.
 */
export function splitSavings(
  before: readonly Message[],
  after: readonly Message[],
  rewritten: readonly number[],
  maxCachedIdx: number,
): SavedSplit {
  let prefix = 0;
  let tail = 0;
  for (const i of rewritten) {
    const a = before[i];
    const b = after[i];
    if (!a || !b) continue;
    const d = messageTokens(a) - messageTokens(b);
    if (i <= maxCachedIdx) prefix += d;
    else tail += d;
  }
  return { prefix: Math.max(0, prefix), tail: Math.max(0, tail) };
}
