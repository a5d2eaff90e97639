// The transport-agnostic contract between the proxy and the expand loop: the loop only ever sees
// upstream replies as status + headers + a byte stream, and answers with one reply for the client.
// Also the shapes the files of expand/ share (limits, continuation turns, trails), kept here so
// none of them imports another for a type.
import type { Readable } from 'node:stream';
import type { Dialect } from '@context-guru/components';

export type { Dialect };

export interface UpstreamReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

export type CallUpstream = (rawBody: string) => Promise<UpstreamReply>;

export interface ExpandHooks {
  /** Tenant-scoped stash lookup; null = unavailable. */
  resolve(id: string): Promise<string | null>;
  /** Called once per expand call whose original was resolved (kept-verbatim + bounce stats). */
  onResolved(id: string, original: string): void;
  /**
   * Before each continuation call, with the summed usage of the answers so far: the first call's
   * usage is what the client's own request cost, the rest is the gateway's continuations.
   */
  onContinue?(usageSoFar: Usage | null): void;
  /**
   * The answer withheld expand calls from the client: its trail (trail.ts) is to be frozen with the
   * session. Awaited before the answer's last bytes go out, so the client's next turn finds it.
   */
  onTrail?(trail: Trail | ResponsesTrail | ResponsesChain): Promise<void>;
}

export interface Usage {
  fresh: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

type ReplyMode = 'json' | 'streamed' | 'buffered';

export interface ClientReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** A stream is piped to the client as-is (the caller handles backpressure). */
  body: Readable | Buffer;
  mode: ReplyMode;
  /** Continuation upstream calls made (0..maxRounds); for a stream, final once streamDone resolved. */
  rounds: number;
  /** Usage of the final response; for a streamed body it is filled in when the stream ends. */
  usage: Usage | null;
  /** Resolves with the final usage once the body has been fully relayed (immediately for a Buffer). */
  usageDone: Promise<Usage | null>;
  /** A stream we could not intercept (e.g. compressed) mentioned the tool name; set when the stream ends. */
  expandAfterStream?: boolean;
  /** Resolves once a streamed body ended (or was torn down); immediately for a Buffer. */
  streamDone: Promise<StreamOutcome>;
  /**
   * The body is the upstream's own bytes, unchanged and not an event stream, so its declared
   * content-length holds for the client too (no chunked framing: one write fewer per answer).
   */
  keepsLength?: boolean;
}

export interface StreamOutcome {
  usage: Usage | null;
  expandAfterStream: boolean;
  /** Bytes relayed to the client. */
  bytes: number;
  /** The upstream stream failed mid-way. */
  error?: unknown;
  /** The client side stopped reading before the upstream stream ended. */
  aborted?: boolean;
  /** Continuation rounds stitched into the stream. */
  rounds?: number;
}

export interface ExpandLoopOptions {
  dialect: Dialect;
  requestRaw: string;
  advertised: boolean;
  first: UpstreamReply;
  call: CallUpstream;
  hooks: ExpandHooks;
  /** Continuation rounds at most (default 3). */
  maxRounds?: number;
  /** Expand calls answered per round and bytes of originals per answer (DEFAULT_EXPAND_LIMITS). */
  limits?: ExpandLimits;
  /** Gemini: the client asked for the stream as a JSON array; upstream was asked for SSE. */
  jsonArray?: boolean;
}

/** How much one answer's expand calls may add to its continuations (EXPAND_CALLS_PER_ROUND, EXPAND_BYTES_PER_ANSWER). */
export interface ExpandLimits {
  /** Calls answered with an original per round; the rest are told to ask again. */
  callsPerRound: number;
  /** Bytes of originals added across all of one answer's rounds (and its trail). */
  bytesPerAnswer: number;
}

export interface ExpandResult {
  callId: string;
  id: string;
  text: string;
  resolved: boolean;
}

/** The model's response: parsed, plus its raw text when it arrived as JSON (kept verbatim then). */
export interface ModelTurn {
  json: unknown;
  raw?: string;
}

export interface ResponsesTrail {
  v: number;
  dialect: 'responses';
  /** Anchor key of the visible item the withheld items sit beside. */
  anchor: string;
  at: 'after' | 'before';
  /** The withheld items exactly as the provider was shown them. */
  items: string[];
}

/** Response `anchor` names (responses-chain.ts) was continued by expand rounds as `final`. */
export interface ResponsesChain {
  v: number;
  dialect: 'responses';
  kind: 'chain';
  anchor: string;
  final: string;
}

export interface TrailCall {
  /** Insert before the round's visible entry `at` (= visible: after its last). */
  at: number;
  /** The call exactly as the provider produced it: a tool_use block / a tool_calls entry. */
  json: string;
}

export interface Trail {
  v: number;
  dialect: Dialect;
  /** Anchor key of the client-visible message (anchorKey). */
  anchor: string;
  rounds: TrailRound[];
}

/** One round of an answer: the model's turn and the results of the expand calls withheld from it. */
export interface AnswerRound {
  turn: ModelTurn;
  results: readonly ExpandResult[];
}

export interface ExpandCall {
  /** The provider's tool-call id (tool_use.id / tool_calls[].id) the result must answer. */
  callId: string;
  /** The stash HASH the model asked for, normalised by expandIdOf ('' when the arguments carried none). */
  id: string;
}

export interface TrailRound {
  /** Entries of this round the client saw: Anthropic content blocks, OpenAI tool calls. */
  visible: number;
  /** OpenAI: this round's content text (the client sees every round's text joined). */
  text?: string;
  calls: TrailCall[];
  /** One answer per call, in call order (tool_result blocks / tool messages), exact bytes. */
  results: string[];
  /** OpenAI, every round but the last: the assistant message exactly as the continuation sent it. */
  message?: string;
}
