// What one request contributes to /stats and /metrics, assembled on the hot path as plain data
// and folded into the rollups after the response has been handed to the client.
import type { Arm, Dialect, Report } from '@context-guru/components';
import type { FailOpenReason } from '../engine.types';
import type { Usage } from '../expand/expand.types';
import type { SavedSplit } from './money';

/** One compaction-model call a component made for this request, with the tokens it reported. */
export interface ModelCall {
  provider: Dialect;
  model: string;
  input: number;
  output: number;
}

export type RouteName = Dialect | 'compact';

export interface RequestReport {
  route: RouteName;
  tenant: string;
  /** The session key, once resolved (absent on pass-through). */
  session?: string;
  /** How traces and holdout figures name the session: keyed with the tenant's key when there is one. */
  sessionHash?: string;
  bypassed: boolean;
  /** Served without new compression work: the compression gate was full. */
  shed?: boolean;
  /** The pipeline ran and its output was forwarded (false on bypass and fail-open). */
  enforced: boolean;
  failOpen?: FailOpenReason;
  tokensBefore: number;
  tokensAfter: number;
  /** Tokens of messages a new decision was allowed to touch (the uncached tail, or all when cold). */
  attemptedTokens: number;
  reports: Report[];
  /** Normalized indices whose change the wire could not write losslessly, charged to the last toucher. */
  discarded: Map<string, number>;
  addedMs: number;
  upstreamMs?: number;
  upstreamStatus?: number;
  usage?: Usage | null;
  sse?: 'streamed' | 'buffered';
  ttfbMs?: number;
  expandAfterStream?: boolean;
  expandRounds: number;
  bounces: number;
  wastedTokens: number;
  frozenHits: number;
  frozenMisses: number;
  compactionReset: boolean;
  /** Changes inside the cached prefix the cache guard reverted. */
  guardReverted: number;
  /** A priced rewrite inside the cached prefix this turn made (absent: none). */
  planned?: PlannedRewriteReport;
  stashHits: number;
  stashMisses: number;
  /** The tenant's preset, as a label ('custom' for an explicit pipeline list). */
  preset: string;
  /** The request body's model: prices a response that does not name its model. */
  model?: string;
  /** Tokens removed from messages that went out rewritten, split at the cache boundary. */
  saved: SavedSplit;
  /**
   * Usage of the first upstream answer when the expand loop continued (the client's own request);
   * `usage` minus this is what the gateway's continuations cost.
   */
  firstUsage?: Usage | null;
  /** Compaction-model calls made for this request, with their reported tokens. */
  modelCalls: ModelCall[];
  /** performance.now() marks of the pipeline and the store flush, for trace spans. */
  marks?: PrepareMarks;
  /** The session's holdout arm, once decided (absent on bypass, pass-through and /compact). */
  arm?: Arm;
  /** The tenant runs a holdout: this turn counts toward its config version's measured saving. */
  measured?: MeasuredTurn;
}

export interface PlannedRewriteReport {
  /** Client message index of the first changed message (the `x-context-guru-rewrite` header's `from`). */
  from: number;
  /** What the cut cost this turn, in input tokens at the uncached rate (negative: it paid at once). */
  costTokens: number;
  /** Content tokens every later turn no longer reads. */
  removedTokens: number;
  /** What each later turn saves, in input tokens at the uncached rate. */
  savingPerTurn: number;
  /** Turns after which it has paid for itself. */
  paybackTurns: number;
  /** costTokens and savingPerTurn in USD, from the tenant's price table. */
  costUsd: number;
  savingUsdPerTurn: number;
}

interface MeasuredTurn {
  version: number;
  /** Content tokens of the messages as the client sent them (before any component). */
  inputTokens: number;
}

interface PrepareMarks {
  pipelineStart: number;
  pipelineEnd: number;
  flushStart: number;
  flushEnd: number;
  /** Originals written by the flush. */
  stashed: number;
}

export function emptyReport(route: RouteName, tenant: string): RequestReport {
  return {
    route,
    tenant,
    bypassed: false,
    enforced: false,
    tokensBefore: 0,
    tokensAfter: 0,
    attemptedTokens: 0,
    reports: [],
    discarded: new Map(),
    addedMs: 0,
    expandRounds: 0,
    bounces: 0,
    wastedTokens: 0,
    frozenHits: 0,
    frozenMisses: 0,
    compactionReset: false,
    guardReverted: 0,
    stashHits: 0,
    stashMisses: 0,
    preset: '',
    saved: { prefix: 0, tail: 0 },
    modelCalls: [],
  };
}
