// The component contract. A component sees normalized, OpenAI-shaped messages and either repacks
// them losslessly (Reformat) or drops bytes after stashing the original (Offload). Components never
// fail a request: the pipeline owns failure, so a component may throw and only it is reverted.
import type { Clock } from './ports/clock.port';
import type { ModelSources } from './ports/model.port';
import type { SessionView } from './ports/session-state.port';
import type { StashWriter } from './ports/stash.port';

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: Record<string, unknown>;
}

/** Any block the pipeline cannot rewrite as text (image, document, tool_use…), carried opaquely. */
export interface OpaqueBlock {
  type: string;
  [key: string]: unknown;
}

export type ContentBlock = TextBlock | OpaqueBlock;

export interface ToolCall {
  id: string;
  name: string;
  /** Raw JSON text of the arguments / input. */
  arguments: string;
  /** Anthropic: the prompt-cache breakpoint on the tool_use block this call is (object-valued). */
  cache_control?: Record<string, unknown>;
}

export interface Message {
  role: Role;
  content: string | ContentBlock[] | null;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
  name?: string;
}

/**
 * The wire dialects the gateway speaks: OpenAI Chat Completions, Anthropic Messages, the OpenAI
 * Responses API (whose provider family is OpenAI's: `providerFamily`) and Gemini generateContent.
 */
export type Dialect = 'openai' | 'anthropic' | 'responses' | 'gemini';

/** The provider a dialect's requests go to: the Responses API is OpenAI's. */
export function providerFamily(dialect: Dialect): 'openai' | 'anthropic' | 'gemini' {
  return dialect === 'responses' ? 'openai' : dialect;
}

/** What the gateway knows about the provider prompt cache for this turn. */
export interface CacheView {
  /** Whether the provider caches prompt prefixes for this request (CACHE_MODE + provider). */
  aware: boolean;
  /** Index of the last message already in the provider's cache; -1 when nothing is. */
  maxCachedIdx: number;
  /** The session's cache has provably expired (idle past TTL + 60 s since a recorded turn). */
  cold: boolean;
}

/**
 * Where the normalized messages came from in the client's own message list. Anthropic splits one
 * client message into several normalized ones (each tool_result, and the blocks beside them), so a
 * count of "the newest N messages" must be taken on the client's list, not on the normalized one.
 */
export interface MessageOrigin {
  /** The client message index of each normalized message (ascending, one entry per message). */
  readonly of: readonly number[];
  /** How many messages the client sent (one may have no normalized message: image-only results). */
  readonly count: number;
}

/** Where components made new decisions inside the provider's cached prefix this run. */
export interface DepthProposals {
  /**
   * Records a new decision at `index` over `before` (the message as it stands, copied); false when
   * `before` is not what the provider holds there, so no new decision may be made on it.
   */
  propose(index: number, before: Message): boolean;
}

/** Everything a component may read or write besides the messages. */
export interface Ctx {
  readonly tenant: string;
  readonly session: string;
  readonly provider: Dialect;
  readonly cache: CacheView;
  /**
   * Present when the gateway prices rewrites inside the cached prefix: a component that makes a new
   * decision there says where, and the planner keeps it only if it pays back (else reverts it).
   */
  readonly depth?: DepthProposals;
  /** Stashes originals; the writes are flushed (durably) before anything is forwarded. */
  readonly stash: StashWriter;
  /** Frozen decisions and kept-verbatim marks of this session, prefetched before the run. */
  readonly state: SessionView;
  readonly clock: Clock;
  /** Breakpoints (cache_control / cachePoint) the inbound body already carries. */
  readonly existingBreakpoints: number;
  /** Model context window when known, else 0. */
  readonly window: number;
  /** Models a model-backed component may call this request (absent: none available). */
  readonly models?: ModelSources;
  /** Token count of the whole request's content (for trigger gates). */
  readonly requestTokens?: number;
  /** Client message of each normalized message (the gateway's; absent: one client message each). */
  readonly origin?: MessageOrigin;
}

export type ComponentKind = 'reformat' | 'offload';

/** Gate name → count of messages the component passed over for that reason. */
export type GateHistogram = Record<string, number>;

/**
 * A tally a component notes for the operator's /stats (which outputs no filter matched, what each
 * filter saved). The component only reports it; the gateway keeps the counters, per context, and
 * counts a run's entries once, from the run whose messages were forwarded.
 */
export type LedgerEntry =
  | { kind: 'selector_miss'; selector: string; contentKey: string }
  | { kind: 'filter_act'; filter: string; family: string; savedTokens: number; stashKey?: string };

export interface ComponentOutcome {
  /** Stash ids of originals this run offloaded (Offloads must return them when they drop content). */
  keys?: string[];
  /** The component decided not to act (e.g. disabled by its own inputs). */
  skipped?: boolean;
  /** The change cannot be undone by expand (marker_mode summary/off); exempt from the keys rule. */
  irreversible?: boolean;
  gates?: GateHistogram;
  ledger?: LedgerEntry[];
  /**
   * mask: the newest, not yet answered tool outputs it will offload once the model has read them
   * (read_min_tokens), as normalized indices.
   */
  readOnceNext?: number[];
  /**
   * cacheinject (withdraw_read_once): the prefix boundary, which carries a breakpoint; the client's
   * breakpoints after it may be withdrawn when everything they would cache is in `readOnceNext`.
   */
  anchor?: number;
}

export interface Report {
  component: string;
  kind: ComponentKind;
  tokensBefore: number;
  tokensAfter: number;
  durationMs: number;
  keys: string[];
  skipped: boolean;
  reverted: boolean;
  irreversible: boolean;
  error?: string;
  changed: number[];
  gates: GateHistogram;
  /** The run's ledger entries (absent when it noted none). */
  ledger?: LedgerEntry[];
  /** ComponentOutcome.readOnceNext / anchor (read only from a run that was kept). */
  readOnceNext?: number[];
  anchor?: number;
}

/** A component's report before it ran: `tokens` before and after, nothing changed, no gate. */
export function blankReport(component: string, kind: ComponentKind, tokens: number): Report {
  return {
    component,
    kind,
    tokensBefore: tokens,
    tokensAfter: tokens,
    durationMs: 0,
    keys: [],
    skipped: false,
    reverted: false,
    irreversible: false,
    changed: [],
    gates: {},
  };
}

export interface Component {
  readonly name: string;
  readonly kind: ComponentKind;
  /**
   * Mutates `messages` in place: a message's fields and content blocks may be written, but its
   * `tool_calls` array is shared with the run's snapshot (cloneMessage), so a change to a call
   * assigns a new array and never writes into the old one. May be async (model-backed components).
   */
  run(messages: Message[], ctx: Ctx): ComponentOutcome | Promise<ComponentOutcome>;
}

/** How a component is declared in the registry: its option schema decoder and its factory. */
export interface ComponentDefinition<O = unknown> {
  readonly name: string;
  readonly kind: ComponentKind;
  /** Every gate name the component can report (documented and exported as metric labels). */
  readonly gates: readonly string[];
  /** Strictly decodes a YAML block into options, applying defaults; throws ConfigError naming the key. */
  readonly options: (raw: unknown, path: string) => O;
  readonly create: (options: O) => Component;
}

export function defineComponent<O>(def: ComponentDefinition<O>): ComponentDefinition<unknown> {
  return def as ComponentDefinition<unknown>;
}
