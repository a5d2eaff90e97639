export { prepareDetached, type DetachedRun } from './detached/detached-prepare';
export { KeepNothingStore } from './detached/keep-nothing.store';
export { EnvError, envProblem, type EnvProblem } from './env/env-errors';
export { HTTP_URL, POSTGRES_URL, envReaders, type EnvReaders, type UrlKind } from './env/env-readers';
export { DEFAULT_EXPAND_LIMITS, ExpandBudget, buildContinuation, resolveCalls } from './expand/continuation';
export {
  EXPAND_TOOL_NAME,
  continuable,
  expandIdOf,
  isExpandToolCall,
  isExpandToolUse,
  openAiMessage,
  splitCalls,
  type CallSplit,
} from './expand/expand-calls';
export {
  type CallUpstream,
  type ClientReply,
  type ExpandHooks,
  type ExpandLoopOptions,
  type StreamOutcome,
  type UpstreamReply,
  type Usage,
} from './expand/expand.types';
export { field, isObject, num, parseJson, str, type JsonObject } from './expand/json-shape';
export { valueAt } from './expand/raw-json';
export { buildResponsesContinuation, isExpandItem, mergeResponses } from './expand/responses-expand';
export { buildGeminiContinuation, chunkJson, contentParts, isExpandPart, mergeGemini } from './expand/gemini-expand';
export { buildResponsesTrails } from './expand/responses-trail';
export { buildResponsesChains } from './expand/responses-chain';
export { SseDecoder, SseEventParser, SseLineSplitter, eventJson, parseSseEvents, type SseEvent } from './expand/sse-lines';
export { TRAIL_COMPONENT, buildTrail } from './expand/trail';
export { SseUsageAccumulator, parseJsonUsage, parseUsage, sumUsage, sumUsageJson, usageKey } from './expand/usage';
export { DEFAULT_PAYBACK_TURNS, type CacheMode, type FailOpenReason, type InjectMode } from './engine.types';
export { createLogger, errorText, type Logger } from './logger';
export { isTransparent, prepareRequest, type PrepareDeps, type PrepareInput, type Prepared } from './prepare-request';
export { RepeatMemo } from './prepare/repeat-memo';
export { USAGE_KINDS, billedUsd, savedUsd, usageByKind, type UsageKind } from './report/money';
export { createPriceTable, readPriceTable, type FamilyPrice, type PriceTable } from './report/price-table';
export { KeyLedger } from './report/key-ledger';
export { StatsRollup } from './report/stats';
export { emptyReport, type ModelCall, type PlannedRewriteReport, type RequestReport } from './report/request-report';
export { sessionHash, sessionPoint } from './session/session-point';
export { LearnedKeys } from './session/session-run';
export {
  DEFAULT_TENANT,
  candidateRuntime,
  createTenantRuntime,
  loadConfigDocument,
  presetPipeline,
  type ShadowCandidate,
  type TenantRuntime,
} from './tenancy/tenant-runtime';
export { BodyText } from './wire/body-text';
export { joinedIfSmall, totalBytes } from './wire/out-chunks';
export { decodeRequest } from './wire/request.wire';
export { SESSION_HEADER, isDerivedSessionBase, namedSessionBase } from './wire/session-key';
export { TurnCache } from './wire/turn-cache';
export { WireError, type Dialect, type WireErrorCode } from './wire/wire.types';
export { DROP_REASONS, comparisonView, type DropReason } from './detached/shadow-comparison';
export { exitOnBootFailure } from './env/boot-failure';
export { DEFAULT_AUTH_FAILURES_PER_MINUTE, RateLimit } from './shared/rate-limit';
export { tuneHeap } from './shared/heap-tuning';
export { upstreamBytes, type UpstreamBytes } from './upstream-body';
export { validateProviderShape } from './wire/shape-validator';
export { armPoint } from './session/arm';
export type { AnswerRound, ExpandLimits, ModelTurn, ResponsesChain, ResponsesTrail, Trail } from './expand/expand.types';
