// The request preparation's contract: what it depends on, what it is given, what it hands back,
// and the plain record its steps share while they run.
import type { Clock, HotStore, MarkerIdSource, ModelSources, Pipeline } from '@context-guru/components';
import type { CacheMode, InjectMode } from '../engine.types';
import type { Logger } from '../logger';
import type { PriceTable } from '../report/price-table';
import type { RequestReport, RouteName } from '../report/request-report';
import type { LearnedKeys } from '../session/session-run';
import type { TenantRuntime } from '../tenancy/tenant-runtime';
import type { BodyText } from '../wire/body-text';
import type { TurnCache } from '../wire/turn-cache';
import type { Dialect, WireView } from '../wire/wire.types';
import type { RepeatMemo } from './repeat-memo';

export interface PrepareDeps {
  store: HotStore;
  /**
   * Keyed marker ids per tenant (the stores' key ring). Absent — a store handed in without one,
   * the dry-run and the shadow, whose markers never leave the process — ids are the unkeyed hash.
   */
  ids?: MarkerIdSource;
  /** Reuses the previous turn's decode and encode for the byte-identical prefix (optional). */
  turns?: TurnCache;
  /** Reuses the forwarded bytes of a byte-identical turn the store answers identically (optional). */
  repeats?: RepeatMemo;
  clock: Clock;
  log: Logger;
  injectMode: InjectMode;
  /**
   * Content keys each session is known to ask beyond its message texts (the gateway context's;
   * absent: learned for this request only, which is correct, only slower on a re-run).
   */
  learned?: LearnedKeys;
  /** Priced rewrites inside the cached prefix (absent: never; the blanket tail gate). */
  rewrites?: PricedRewrites;
}

interface PricedRewrites {
  /** A cut must pay back within this many later turns (0: never). */
  paybackTurns: number;
  /** The tenant's price table (the one behind cg_billed_usd_total). */
  prices: PriceTable;
}

export interface PrepareInput {
  route: RouteName;
  dialect: Dialect;
  /** The body as one string: a rope of `text`'s pieces when the turn cache built it (never read on a warm turn). */
  raw: string;
  /** The body as the turn cache decoded it (pieces: the previous turn's shared prefix, then the rest). */
  text?: BodyText;
  /**
   * The bytes `raw` was decoded from, when the caller holds them: the repeated-turn memo keeps
   * them to recognise the next identical body before it is decoded (RepeatMemo.textOf).
   */
  bytes?: Buffer;
  tenant: TenantRuntime;
  pipeline: Pipeline;
  cacheMode: CacheMode;
  sessionHeader?: string;
  /** The `session_id` / `conversation_id` header (the Responses route names sessions with it). */
  conversationHeader?: string;
  bypassHeader: boolean;
  /**
   * The compression gate is full: no new compression work, only the provider-cached bytes of
   * earlier turns replayed (the tool list and markers stay as the tenant's pipeline has them).
   */
  shed?: boolean;
  /** The models this request may spend on, from its decoded body. */
  models?: (body: Record<string, unknown>) => ModelSources;
}

export interface Prepared {
  /** Absent on the transparent fast path (empty pipeline, no markers): nothing was decoded. */
  view?: WireView;
  session: string;
  /** The body to forward: rewritten, or the pristine inbound text. */
  outgoing: string;
  /**
   * `outgoing` as UTF-8 when already at hand, so it is not encoded again: a replayed turn's, or the
   * turn cache's chunks (the reused prefix's bytes plus the newly encoded rest, never concatenated).
   */
  encoded?: Buffer | readonly Buffer[];
  /** The outgoing body declares context_guru_expand, so expand calls are intercepted. */
  advertised: boolean;
  report: RequestReport;
}

/** One request being prepared: every step reads its dependencies and input and adds to its report. */
export interface Preparing {
  readonly deps: PrepareDeps;
  readonly input: PrepareInput;
  readonly report: RequestReport;
  readonly learned: LearnedKeys;
  /** performance.now() when preparation began (report.addedMs is measured from it). */
  readonly started: number;
}
