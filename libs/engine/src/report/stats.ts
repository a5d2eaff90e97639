// The /stats rollup. Key names follow the original's append-only contract (harnesses parse them);
// savings are token-weighted, and unique savings count each stashed original once so replayed
// decisions are not sold as new savings every turn.
import type { Report } from '@context-guru/components';
import { KeyLedger } from './key-ledger';
import { type RequestReport } from './request-report';

interface ComponentRollup {
  runs: number;
  acted: number;
  mutated: number;
  reverted: number;
  saved_tokens: number;
  saved_tokens_unique: number;
  duration_ms: number;
  discarded_changes: number;
  gates: Record<string, number>;
}

export class StatsRollup {
  private requests = 0;
  private tokensBefore = 0;
  private tokensAfter = 0;
  private attempted = 0;
  private bypassed = 0;
  private failOpen = 0;
  private bounces = 0;
  private wasted = 0;
  private addedMsSum = 0;
  private upstreamMsSum = 0;
  private upstreamCount = 0;
  private sseStreamed = 0;
  private sseBuffered = 0;
  private sseTtfbSum = 0;
  private sseExpandAfterStream = 0;
  private frozenHits = 0;
  private frozenMisses = 0;
  private compactionResets = 0;
  private guardReverts = 0;
  private plannedRewrites = 0;
  private plannedCostTokens = 0;
  private plannedCostUsd = 0;
  private plannedSavingPerTurnTokens = 0;
  private plannedSavingPerTurnUsd = 0;
  private fresh = 0;
  private cacheRead = 0;
  private cacheWrite = 0;
  private output = 0;
  private expandRounds = 0;
  private stashHits = 0;
  private stashMisses = 0;
  private readonly components = new Map<string, ComponentRollup>();
  private readonly ledger = new KeyLedger();

  record(r: RequestReport): void {
    this.requests++;
    if (r.bypassed) this.bypassed++;
    if (r.failOpen) this.failOpen++;
    if (r.enforced) {
      this.tokensBefore += r.tokensBefore;
      this.tokensAfter += r.tokensAfter;
      this.attempted += r.attemptedTokens;
      for (const rep of r.reports) this.recordComponent(rep, r.discarded.get(rep.component) ?? 0);
    }
    this.bounces += r.bounces;
    this.wasted += r.wastedTokens;
    this.expandRounds += r.expandRounds;
    this.stashHits += r.stashHits;
    this.stashMisses += r.stashMisses;
    this.addedMsSum += r.addedMs;
    if (r.upstreamMs !== undefined) {
      this.upstreamMsSum += r.upstreamMs;
      this.upstreamCount++;
    }
    if (r.sse === 'streamed') this.sseStreamed++;
    if (r.sse === 'buffered') this.sseBuffered++;
    if (r.sse && r.ttfbMs !== undefined) this.sseTtfbSum += r.ttfbMs;
    if (r.expandAfterStream) this.sseExpandAfterStream++;
    this.frozenHits += r.frozenHits;
    this.frozenMisses += r.frozenMisses;
    if (r.compactionReset) this.compactionResets++;
    this.guardReverts += r.guardReverted;
    if (r.planned) {
      this.plannedRewrites++;
      this.plannedCostTokens += r.planned.costTokens;
      this.plannedCostUsd += r.planned.costUsd;
      this.plannedSavingPerTurnTokens += r.planned.savingPerTurn;
      this.plannedSavingPerTurnUsd += r.planned.savingUsdPerTurn;
    }
    if (r.usage) {
      this.fresh += r.usage.fresh;
      this.cacheRead += r.usage.cacheRead;
      this.cacheWrite += r.usage.cacheWrite;
      this.output += r.usage.output;
    }
  }

  private recordComponent(rep: Report, discarded: number): void {
    const c = this.componentRollup(rep.component);
    c.runs++;
    const saved = Math.max(0, rep.tokensBefore - rep.tokensAfter);
    if (rep.reverted) c.reverted++;
    else {
      if (!rep.skipped) c.mutated += rep.changed.length > 0 ? 1 : 0;
      if (saved > 0 && !rep.skipped) c.acted++;
      // A discarded change never reached the provider: reverse its share of the credited saving.
      const share = rep.changed.length ? Math.min(1, discarded / rep.changed.length) : 0;
      const credited = saved * (1 - share);
      c.saved_tokens += credited;
      c.saved_tokens_unique += credited * this.ledger.freshFraction(rep.component, rep.keys);
    }
    c.discarded_changes += discarded;
    c.duration_ms += rep.durationMs;
    for (const [gate, n] of Object.entries(rep.gates)) c.gates[gate] = (c.gates[gate] ?? 0) + n;
  }

  private componentRollup(name: string): ComponentRollup {
    let c = this.components.get(name);
    if (!c) {
      c = {
        runs: 0,
        acted: 0,
        mutated: 0,
        reverted: 0,
        saved_tokens: 0,
        saved_tokens_unique: 0,
        duration_ms: 0,
        discarded_changes: 0,
        gates: {},
      };
      this.components.set(name, c);
    }
    return c;
  }

  snapshot(extra: Record<string, unknown> = {}): Record<string, unknown> {
    const saved = this.tokensBefore - this.tokensAfter;
    const components: Record<string, unknown> = {};
    for (const [name, c] of [...this.components].sort(([a], [b]) => a.localeCompare(b))) {
      const unique = Math.round(c.saved_tokens_unique);
      components[name] = {
        runs: c.runs,
        acted: c.acted,
        mutated: c.mutated,
        reverted: c.reverted,
        saved_tokens: Math.round(c.saved_tokens),
        saved_tokens_unique: unique,
        overcount_ratio: unique > 0 ? round2(c.saved_tokens / c.saved_tokens_unique) : 0,
        duration_ms: round2(c.duration_ms),
        discarded_changes: c.discarded_changes,
        verdict: c.runs === 0 ? 'idle' : c.acted > 0 ? 'acted' : c.mutated > 0 ? 'moved' : 'skipped',
        ...(Object.keys(c.gates).length ? { gates: { ...c.gates } } : {}),
      };
    }
    const newInput = this.fresh + this.cacheWrite + saved;
    return {
      requests: this.requests,
      bypassed: this.bypassed,
      fail_open: this.failOpen,
      tokens_before: this.tokensBefore,
      tokens_after: this.tokensAfter,
      saved_tokens: saved,
      savings_pct: pct(saved, this.tokensBefore),
      wasted_tokens: this.wasted,
      bounces: this.bounces,
      adjusted_saved: saved - this.wasted,
      expand_rounds: this.expandRounds,
      stash_hits: this.stashHits,
      stash_misses: this.stashMisses,
      components,
      top_passthrough: [...this.components]
        .filter(([, c]) => c.runs > 0 && c.mutated === 0)
        .map(([n]) => n)
        .sort(),
      top_discarded: [...this.components]
        .filter(([, c]) => c.discarded_changes > 0)
        .map(([n]) => n)
        .sort(),
      cg_added_ms_avg: this.requests ? round2(this.addedMsSum / this.requests) : 0,
      upstream_ms_avg: this.upstreamCount ? round2(this.upstreamMsSum / this.upstreamCount) : 0,
      sse_streamed: this.sseStreamed,
      sse_buffered: this.sseBuffered,
      sse_ttfb_ms_avg: this.sseStreamed + this.sseBuffered ? round2(this.sseTtfbSum / (this.sseStreamed + this.sseBuffered)) : 0,
      sse_buffered_pct: pct(this.sseBuffered, this.sseStreamed + this.sseBuffered),
      sse_expand_after_stream: this.sseExpandAfterStream,
      frozen_hits: this.frozenHits,
      frozen_misses: this.frozenMisses,
      compaction_resets: this.compactionResets,
      cache_guard_reverts: this.guardReverts,
      planned_rewrites: this.plannedRewrites,
      planned_rewrite_cost_tokens: this.plannedCostTokens,
      planned_rewrite_cost_usd: round6(this.plannedCostUsd),
      planned_rewrite_saving_per_turn_tokens: this.plannedSavingPerTurnTokens,
      planned_rewrite_saving_per_turn_usd: round6(this.plannedSavingPerTurnUsd),
      fresh_input_tokens: this.fresh,
      cache_read_tokens: this.cacheRead,
      cache_write_tokens: this.cacheWrite,
      output_tokens: this.output,
      attempted_tokens: this.attempted,
      frozen_tokens: this.tokensBefore - this.attempted,
      savings_pct_attempted: pct(saved, this.attempted),
      savings_pct_new_input: this.fresh + this.cacheWrite > 0 ? pct(saved, newInput) : 0,
      mode: 'sync',
      ...extra,
    };
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

function pct(part: number, whole: number): number {
  return whole > 0 ? round2((part / whole) * 100) : 0;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
