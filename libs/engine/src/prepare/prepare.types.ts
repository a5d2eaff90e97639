// The request preparation's contract: what it depends on, what it is given, what it hands back,
// and the plain record its steps share while they run.
import type { Clock, HotStore, KeyedNames, MarkerIdSource, ModelSources, Pipeline, StashEntry, TurnRecord } from '@context-guru/components';
import type { CacheMode, InjectMode } from '../engine.types';
import type { Logger } from '../logger';
import type { PriceTable } from '../report/price-table';
import type { RequestReport, RouteName } from '../report/request-report';
import type { LearnedKeys, LoadedSession } from '../session/session-run';
import type { TenantRuntime } from '../tenancy/tenant-runtime';
import type { BodyText } from '../wire/body-text';
import type { TurnCache, DecodedTurn } from '../wire/turn-cache';
import type { Dialect, WireView } from '../wire/wire.types';
import type { TurnCache as CachedTurn } from '../session/cache-view';

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
  repeats?: Repeats;
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
  /** The model the route's path names (Gemini, Bedrock, Vertex): their bodies carry none. */
  model?: string;
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
  /** The tenant's keyed names (absent without a key ring: derived names stay unkeyed). */
  readonly names?: KeyedNames;
}

export interface Decoded {
  /** The decode as the turn cache keeps it (its encode reuses the same prefix). */
  turn: DecodedTurn;
  view: WireView;
  session: string;
  /** Forwarded untouched: the bypass header, or the agent's own compaction request. */
  bypass: boolean;
  /** The pipeline that runs: the tenant's, or none at all when the request is shed. */
  running: Pipeline;
}

/** The store's session stamp and the learned keys' generation read just before a load, and when. */
export interface LoadStamp {
  stamp: number | undefined;
  generation: number;
  at: number;
  /** `loaded` is a remembered turn's, taken without reading the store. */
  reused: boolean;
}

/** What the pipeline wrote into the report, copied onto every replayed turn. */
type RepeatReport = Pick<
  RequestReport,
  'tokensBefore' | 'tokensAfter' | 'attemptedTokens' | 'reports' | 'discarded' | 'frozenHits' | 'frozenMisses' | 'guardReverted' | 'saved'
>;

export interface RepeatEntry {
  readonly raw: string;
  /**
   * The inbound bytes `raw` was decoded from, when the caller had them: a later body is matched on
   * them before it is decoded. The request's own buffer, kept as is (nothing writes to a body once read).
   */
  readonly bytes: Buffer | undefined;
  readonly tenant: TenantRuntime;
  readonly pipeline: Pipeline;
  readonly cacheMode: CacheMode;
  readonly decoded: Decoded;
  readonly conversation: string;
  readonly ttlMs: number;
  /** Content keys of the body's tool outputs (plus checkpoint and trail keys), as openSession computes them. */
  readonly keys: readonly string[];
  /** Model sources were on offer (an offered source may change what a model-backed component does). */
  readonly hadModels: boolean;
  // What the store answered the remembered run.
  readonly prev: TurnRecord | null;
  readonly cached: CachedTurn;
  readonly loaded: LoadedSession;
  /** What vouches for `loaded` (refreshed by a replay that read the store again and found it the same). */
  load: LoadStamp;
  // What the remembered run produced and wrote.
  readonly outgoing: string;
  /** `outgoing` as UTF-8: the run's chunks, or encoded on the first replay (forwardedBytes). */
  outgoingBytes?: Buffer | readonly Buffer[];
  readonly advertised: boolean;
  readonly stash: readonly StashEntry[];
  /** When `stash` was last put (clock ms): by the remembered run's flush, then by the replays that re-put it. */
  stashedAt: number;
  readonly rewritten: readonly number[];
  readonly report: RepeatReport;
}

/** What identifies a body's memo slot before it is decoded. */
export type RepeatSlot = Pick<PrepareInput, 'tenant' | 'dialect' | 'shed' | 'sessionHeader' | 'conversationHeader' | 'bypassHeader'>;

/** The repeated-turn memo as the prepare steps use it (RepeatMemo in repeat-memo.ts). */
export interface Repeats {
  hits: number;
  misses: number;
  /** The remembered turn of a byte-identical body on the same session and slot. */
  find(input: PrepareInput): RepeatEntry | undefined;
  remember(input: PrepareInput, entry: RepeatEntry): void;
  forget(key: string | PrepareInput): void;
}
