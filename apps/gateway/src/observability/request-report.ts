// What one request contributes to /stats and /metrics, assembled on the hot path as plain data
// and folded into the rollups after the response has been handed to the client.
import type { Report } from '@context-guru/components';
import type { Usage } from '../expand/expand.types';

export type RouteName = 'openai' | 'anthropic' | 'compact';

export interface RequestReport {
  route: RouteName;
  tenant: string;
  /** The session key, once resolved (absent on pass-through). */
  session?: string;
  bypassed: boolean;
  /** Served without new compression work: the compression gate was full. */
  shed?: boolean;
  /** The pipeline ran and its output was forwarded (false on bypass and fail-open). */
  enforced: boolean;
  failOpen?: string;
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
  stashHits: number;
  stashMisses: number;
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
  };
}
