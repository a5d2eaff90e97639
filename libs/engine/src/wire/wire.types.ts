// The wire view is read-only evidence about one inbound body: the raw text is the single source of
// truth for what reaches the provider, everything else (parsed body, normalized messages, slots)
// only tells the encoder where a change may be spliced into those raw bytes.
import type { Dialect, Message } from '@context-guru/components';
import type { BodyText } from './body-text';
import type { RawIndex } from './raw-index';

export type { Dialect };

/** A body the gateway cannot decode: answered with its code before anything is forwarded. */
export class WireError extends Error {
  constructor(
    readonly code: WireErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WireError';
  }

  /** Every decoding failure is the client's: the gateway's error table answers each with 400. */
  get status(): number {
    return 400;
  }
}

/** The decoding failures, each a row of the gateway's error table (answered 400). */
export type WireErrorCode = 'malformed_json' | 'too_deep' | 'invalid_request';

/**
 * Where a normalized message lives in the raw body. `msg` is the index in the body's `messages`
 * array; block indices are indices into that raw message's `content` array.
 */
export type Slot =
  /** OpenAI: the whole body message; only its `content` value is ever rewritten. */
  | { kind: 'openai'; msg: number }
  /** Anthropic message whose `content` is a string. */
  | { kind: 'text'; msg: number }
  /** Anthropic tool_result block whose `content` is a string. */
  | { kind: 'result'; msg: number; block: number }
  /** One `{type:"text"}` element of an Anthropic tool_result whose `content` is an array. */
  | { kind: 'result_part'; msg: number; block: number; part: number }
  /** Anthropic content blocks: normalized content[j] is raw content[blocks[j]]. */
  | { kind: 'blocks'; msg: number; blocks: number[] }
  /** Responses `input` item read but never rewritten (a message, or a run of calls from item `msg` on). */
  | { kind: 'item'; msg: number }
  /** Responses tool output item whose `output` is a string (`function_call_output`, `custom_tool_call_output`). */
  | { kind: 'output'; msg: number }
  /** One `{type:"input_text"}` element of a Responses tool output whose `output` is an array. */
  | { kind: 'output_part'; msg: number; part: number }
  /** A Gemini content read but never rewritten (a model turn, or a user content's other parts). */
  | { kind: 'content'; msg: number }
  /**
   * A Gemini functionResponse part: its `response` member `key` holds the text, or (key null) the
   * whole `response` value is the text as JSON.
   */
  | { kind: 'function_response'; msg: number; part: number; key: string | null };

export interface WireView {
  dialect: Dialect;
  /** The body text exactly as received (utf8): one string, never read on a warm turn's path (see `text`). */
  raw: string;
  /** The same text as pieces (body-text.ts): what every scan of the body reads. */
  text: BodyText;
  /** JSON.parse(raw): read model/stream/tools/metadata from it, never re-serialize it. */
  body: Record<string, unknown>;
  /** Normalized, OpenAI-shaped messages (Anthropic tool_result blocks become synthetic tool messages). */
  messages: Message[];
  systemHead: string;
  firstUserText: string;
  stream: boolean;
  /** cache_control / cachePoint count across system + tools + messages (§2.6). */
  breakpoints: number;
  /** A resolvable marker (raw or \u003c/\u003e-escaped) inside `messages` or `system` only (§3.1). */
  hasMarkers: boolean;
  /** hasMarkers, or the summary sentinel ⟪cg⟫ (raw or escaped) inside `messages` or `system`. */
  hasPlaceholder: boolean;
  /** `tools` is a non-empty array. */
  toolsDeclared: boolean;
  /** No `tool_choice`, or it is auto ("auto" on OpenAI, {type:"auto"} on Anthropic). */
  toolChoiceAllowsInjection: boolean;
  expandToolDeclared: boolean;
  /** One slot per normalized message (same index). */
  slots: readonly Slot[];
  /** A private copy of `messages` as decoded: the encoder diffs against it, not against `messages`. */
  original: readonly Message[];
  /** Lazily built position index of the raw body. */
  index: RawIndex;
  /** Where the first marker inside `messages`/`system` starts, or -1 (lets a later turn scan only what is new). */
  firstMarkerAt: number;
  /** Where the first summary sentinel inside `messages`/`system` starts, or -1. */
  firstSentinelAt: number;
  /** Where "1h" first occurs anywhere in the text, or -1 (the pre-filter of the Anthropic 1 h cache TTL). */
  firstOneHourAt: number;
}

export interface EncodeResult {
  raw: string;
  changed: boolean;
  /** Normalized indices whose change could not be written losslessly (the message kept its bytes). */
  discarded: number[];
  /** The expand tool was appended to `tools` by this encode. */
  injected: boolean;
  /** Breakpoints on the emitted body (inbound count + cache_control keys this encode inserted). */
  breakpoints: number;
  /** `raw` as UTF-8, in chunks sent one after another, when the turn cache built them. */
  bytes?: readonly Buffer[];
}

/** A replacement of raw[start, end) by text; an insertion has start === end. */
export interface Edit {
  start: number;
  end: number;
  text: string;
  /** The edit inserts a cache_control breakpoint (it spends the budget of 4). */
  breakpoint?: boolean;
  /** The edit appends the expand tool. */
  injection?: boolean;
  /** The edit removes a client's cache_control from the newest turn (withdraw-breakpoints.ts). */
  withdrawal?: boolean;
}
