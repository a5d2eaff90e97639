// Agents re-send the whole transcript every turn, so a warm turn's body is the previous turn's
// body plus a few new messages. The turn cache keeps each session's last decoded view and encoded
// output and reuses both for the byte-identical prefix: a warm turn parses, plans and splices only
// what is new. Reuse is decided by comparing bytes and pipeline outputs, never by trusting a key,
// so a stale or colliding entry can only cost a full decode, never a wrong byte.
// The body's text is built the same way: `text()` compares the inbound bytes with the entry's and
// decodes only the bytes after the shared prefix (UTF-8 decoding of a 1 MB body was a quarter of
// a warm turn).
import { isUtf8 } from 'node:buffer';
import type { Message } from '@context-guru/components';
import { BodyText } from './body-text';
import type { Span } from './json-scan';
import { decodeRequest, encodeEdits, type EncodeOptions, type EncodePlan, type ReusedPrefix } from './request.wire';
import { appendText, byteSize, chunksOf, chunkText, cutChunks, type OutChunks } from './out-chunks';
import { extendView, prefixOf, type PrefixMatch } from './turn-extend';
import { sameMessage } from './splice';
import type { Dialect, Edit, EncodeResult, WireView } from './wire.types';

const KEY_CHARS = 2048;
const PER_KEY = 8;
/** How many trailing messages a client may have re-written (moved cache_control) and still reuse. */
const REWRITTEN_TAIL = 3;
/** Bytes decoded to find a body's key: at most 4 per character, plus one character cut short. */
const KEY_BYTES = KEY_CHARS * 4 + 4;

/** Inbound bytes a text was decoded from (valid UTF-8), with the byte offset of each message span's end. */
interface BodyBytes {
  buf: Buffer;
  /** byteEnds[i]: the byte offset of spans[i].end; may be shorter than the spans (computed on remember). */
  byteEnds: number[];
}

/** What `text()` knew about a text it decoded: its bytes, and the entry whose leading `k` messages' bytes it shares. */
interface PendingText {
  bytes: BodyBytes;
  shared?: { prev: Entry; k: number };
}

interface Entry {
  key: string;
  view: WireView;
  /** view.text, its last piece cut to the messages when that piece held more (the next turn's prefix source). */
  text: BodyText;
  /** Element spans of the body's `messages` (valid in view.raw). */
  spans: Span[];
  arrayStart: number;
  /** Text after the messages array's closing bracket. */
  tail: string;
  /** Absent when that turn's encode cannot be reused (a restructured message list). */
  encoded?: Encoded;
  /** Absent when the text did not come through `text()` (its bytes are unknown). */
  bytes?: BodyBytes;
  chars: number;
}

interface Encoded {
  out: Message[];
  plan: EncodePlan;
  result: EncodeResult;
  /** result.raw as pieces with their bytes (absent for an unchanged body whose bytes are unknown). */
  chunks: OutChunks | undefined;
}

interface Reuse extends PrefixMatch {
  prev: Entry;
}

export interface DecodedTurn {
  view: WireView;
  reuse: Reuse | null;
  /** The bytes view.raw was decoded from, when `text()` decoded it (handed to the entry on encode). */
  bytes?: BodyBytes | undefined;
}

export class TurnCache {
  private readonly byKey = new Map<string, Entry[]>();
  private readonly lru = new Set<Entry>();
  /** Texts `text()` built and `decode()` has not taken yet (a repeat served from its memo never is). */
  private readonly pending = new WeakMap<BodyText, PendingText>();
  private chars = 0;
  hits = 0;
  misses = 0;
  /** Bytes `text()` did not decode (reused from a cached turn's text). */
  bytesShared = 0;
  /** Encodes that kept the previous turn's output for a prefix and encoded only the rest. */
  prefixReuses = 0;

  constructor(private readonly maxChars = 16 * 1024 * 1024) {}

  /**
   * `bytes` as text — exactly `bytes.toString('utf8')`, as pieces — decoding only the bytes after the
   * longest prefix of whole messages it shares with a cached turn of this scope and dialect.
   * Splitting after a message's last byte (ASCII) never splits a character, so the cached text of
   * those bytes plus the decoded rest is the decoded whole. The cache keeps `bytes` for the next
   * turn's comparison: the caller must never write into them afterwards (the route's body is its own copy).
   */
  text(dialect: Dialect, bytes: Buffer, scope: string): BodyText {
    if (bytes.length > KEY_BYTES) {
      const key = keyOf(scope, dialect, bytes.toString('utf8', 0, KEY_BYTES));
      for (const prev of this.byKey.get(key) ?? []) {
        const shared = sharedMessages(prev, bytes);
        if (!shared || !prev.bytes) continue;
        const text = prev.text.prefixPlus(shared.charEnd, bytes.toString('utf8', shared.byteEnd));
        this.bytesShared += shared.byteEnd;
        this.pending.set(text, { bytes: { buf: bytes, byteEnds: prev.bytes.byteEnds.slice(0, shared.k) }, shared: { prev, k: shared.k } });
        return text;
      }
    }
    const text = BodyText.of(bytes.toString('utf8'));
    // Byte offsets are derived from character lengths, which needs every byte to be a character.
    if (isUtf8(bytes)) this.pending.set(text, { bytes: { buf: bytes, byteEnds: [] } });
    return text;
  }

  decode(dialect: Dialect, input: string | BodyText, scope: string): DecodedTurn {
    const text = typeof input === 'string' ? BodyText.of(input) : input;
    const pending = this.pending.get(text);
    this.pending.delete(text);
    const shared = pending?.shared;
    // The bytes already proved the prefix identical: no text comparison, only the element check.
    // (An entry evicted since is still whole: entries are never mutated.)
    if (shared) {
      const reuse = prefixOf(shared.prev, text, shared.k);
      const view = reuse && extendView(shared.prev, text, reuse);
      if (reuse && view) {
        this.hits++;
        return { view, reuse: { prev: shared.prev, ...reuse }, bytes: pending.bytes };
      }
    }
    const bytes = pending && { buf: pending.bytes.buf, byteEnds: [] };
    const key = keyOf(scope, dialect, text.slice(0, KEY_CHARS));
    for (const prev of this.byKey.get(key) ?? []) {
      const reuse = matchPrefix(prev, text);
      if (!reuse) continue;
      const view = extendView(prev, text, reuse);
      if (!view) break;
      this.hits++;
      return { view, reuse: { prev, ...reuse }, bytes };
    }
    this.misses++;
    return { view: decodeRequest(dialect, text.whole()), reuse: null, bytes };
  }

  /** Encodes, reusing the previous turn's output for the prefix whose outputs did not change. */
  encode(turn: DecodedTurn, out: Message[], opts: EncodeOptions, scope: string): EncodeResult {
    const { view, reuse } = turn;
    const reused = reuse?.prev.encoded ? prefixOutput(view, out, reuse) : null;
    const { result, plan } = encodeEdits(view, out, opts, reused ?? undefined);
    if (plan?.afterPrefix !== undefined) this.prefixReuses++;
    const chunks = plan ? outChunks(turn, result, plan, reused) : undefined;
    const sent = chunks ? { ...result, bytes: chunks.bytes } : result;
    this.remember(scope, turn, plan ? { out, plan, result: sent, chunks } : undefined);
    return sent;
  }

  private remember(scope: string, turn: DecodedTurn, encoded: Entry['encoded']): void {
    const { view } = turn;
    const replaces = turn.reuse?.prev;
    // The entry owns the bytes now: the turn itself may outlive it (the repeat memo keeps it), and
    // a 1 MB body kept there would sit outside every budget.
    const given = turn.bytes;
    turn.bytes = undefined;
    if (replaces) this.drop(replaces);
    const span = view.index.topLevel(view.index.listKey);
    if (!span || view.text.charCodeAt(span.start) !== 0x5b) return;
    const count = view.index.messageCount();
    const spans: Span[] = [];
    for (let i = 0; i < count; i++) {
      const s = view.index.message(i);
      if (!s) return; // an index short of its own count: nothing to reuse next turn
      spans.push(s);
    }
    const bytes = given && withByteEnds(given, view.text, spans);
    const entry: Entry = {
      key: keyOf(scope, view.dialect, view.text.slice(0, KEY_CHARS)),
      view,
      text: bytes ? trimmed(view.text, spans, bytes) : view.text,
      spans,
      arrayStart: span.start,
      tail: view.text.slice(span.end),
      encoded,
      bytes,
      chars:
        view.text.length + (encoded?.result.raw.length ?? 0) + (bytes?.buf.length ?? 0) + (encoded?.chunks ? byteSize(encoded.chunks) : 0),
    };
    const list = this.byKey.get(entry.key) ?? [];
    list.unshift(entry);
    if (list.length > PER_KEY) for (const old of list.splice(PER_KEY)) this.forget(old);
    this.byKey.set(entry.key, list);
    this.lru.add(entry);
    this.chars += entry.chars;
    for (const old of this.lru) {
      if (this.chars <= this.maxChars) break;
      this.drop(old);
    }
  }

  private drop(e: Entry): void {
    const list = this.byKey.get(e.key);
    if (list) {
      const i = list.indexOf(e);
      if (i >= 0) list.splice(i, 1);
      if (!list.length) this.byKey.delete(e.key);
    }
    this.forget(e);
  }

  private forget(e: Entry): void {
    if (this.lru.delete(e)) this.chars -= e.chars;
  }
}

function keyOf(scope: string, dialect: Dialect, text: string): string {
  return `${scope}\u0000${dialect}\u0000${text.slice(0, KEY_CHARS)}`;
}

/** The byte offsets of every span's end: the known ones kept, the rest measured from the last known. */
function withByteEnds(bytes: BodyBytes, text: BodyText, spans: readonly Span[]): BodyBytes {
  const byteEnds = bytes.byteEnds.slice(0, spans.length);
  let char = spans[byteEnds.length - 1]?.end ?? 0;
  let byte = byteEnds.at(-1) ?? 0;
  for (let i = byteEnds.length; i < spans.length; i++) {
    const end = spans[i]?.end ?? char;
    byte += Buffer.byteLength(text.slice(char, end));
    char = end;
    byteEnds.push(byte);
  }
  return { buf: bytes.buf, byteEnds };
}

/** The text with its last piece re-decoded from the bytes of exactly its messages (see BodyText.trimmedTo). */
function trimmed(text: BodyText, spans: readonly Span[], bytes: BodyBytes): BodyText {
  const last = spans.length - 1;
  const end = spans[last]?.end;
  if (end === undefined) return text;
  const byteAt = (char: number): number | undefined => {
    for (let i = last; i >= 0 && (spans[i]?.end ?? -1) >= char; i--) if (spans[i]?.end === char) return bytes.byteEnds[i];
    return undefined;
  };
  return text.trimmedTo(end, (start, stop) => {
    const [from, to] = [byteAt(start), byteAt(stop)];
    return from === undefined || to === undefined ? undefined : bytes.buf.toString('utf8', from, to);
  });
}

/**
 * The longest run of leading messages (allowing a rewritten tail) whose bytes `bytes` shares with
 * `prev`. Runs are nested, so the bytes all candidates share are compared once and then each
 * longer candidate's last message only: comparing each candidate whole cost up to four 1 MB
 * comparisons per turn for a client that moves its breakpoint (1.8 ms of a warm Anthropic turn).
 */
function sharedMessages(prev: Entry, bytes: Buffer): { k: number; charEnd: number; byteEnd: number } | null {
  const known = prev.bytes;
  if (!known) return null;
  let best: { k: number; charEnd: number; byteEnd: number } | null = null;
  let matched = 0;
  for (let k = Math.max(1, prev.spans.length - REWRITTEN_TAIL); k <= prev.spans.length; k++) {
    const byteEnd = known.byteEnds[k - 1];
    const charEnd = prev.spans[k - 1]?.end;
    if (byteEnd === undefined || charEnd === undefined || bytes.length <= byteEnd) break;
    if (bytes.compare(known.buf, matched, byteEnd, matched, byteEnd) !== 0) break;
    matched = byteEnd;
    best = { k, charEnd, byteEnd };
  }
  // The entry's bytes were valid UTF-8 as a whole, so the shared prefix is; the rest must be too.
  return best && isUtf8(bytes.subarray(best.byteEnd)) ? best : null;
}

/** How many leading body messages of `text` are character-identical to `prev`'s (allowing a rewritten tail). */
function matchPrefix(prev: Entry, text: BodyText): PrefixMatch | null {
  const spans = prev.spans;
  for (let k = spans.length; k >= Math.max(1, spans.length - REWRITTEN_TAIL); k--) {
    const end = spans[k - 1]?.end;
    if (end === undefined) break; // k - 1 is inside spans
    // `===` on two strings compares memory directly; startsWith walks characters (30x slower).
    if (text.length <= end || text.slice(0, end) !== prev.text.slice(0, end)) continue;
    const reuse = prefixOf(prev, text, k);
    if (reuse) return reuse;
  }
  return null;
}

/**
 * The previous output's bytes for the leading body messages whose pipeline outputs are unchanged:
 * identical input bytes + identical before/after → identical spliced bytes.
 */
function prefixOutput(view: WireView, out: Message[], reuse: Reuse): ReusedPrefix | null {
  const enc = reuse.prev.encoded;
  if (!enc || out.length !== view.messages.length || enc.out.length !== reuse.prev.view.messages.length) return null;
  let n = 0;
  while (n < reuse.normalized && sameMessage(out[n], enc.out[n])) n++;
  // Whole body messages only: a body message is reusable when all its normalized messages are.
  const bodyMsg = beforeWithdrawal(n < reuse.normalized ? view.slots[n]?.msg : reuse.bodyMessages, enc.plan.edits, reuse.prev.spans);
  if (bodyMsg === undefined || bodyMsg === 0) return null;
  for (let s = view.slots[n - 1]; s !== undefined && s.msg >= bodyMsg; s = view.slots[n - 1]) n--;
  const rawEnd = reuse.prev.spans[bodyMsg - 1]?.end;
  if (rawEnd === undefined) return null;
  const before = enc.plan.edits.filter((e) => e.end <= rawEnd);
  if (enc.plan.edits.some((e) => e.start < rawEnd && e.end > rawEnd)) return null;
  // Breakpoints spent in the prefix were budgeted against last turn's inbound count.
  if (before.some((e) => e.breakpoint) && view.breakpoints !== reuse.prev.view.breakpoints) return null;
  // The expand tool lives in `tools`; if that sits before the messages, last turn's decision must
  // hold (the encoder checks it is this turn's very edit).
  let outEnd = rawEnd;
  for (const e of before) outEnd += e.text.length - (e.end - e.start);
  return {
    rawEnd,
    ...outputBefore(enc, outEnd),
    fromMessage: n,
    prefixEdits: before,
    discardedBefore: enc.result.discarded.filter((i) => i < n),
  };
}

/**
 * A breakpoint withdrawn last turn belonged to last turn's newest messages; this turn decides
 * them afresh (they are not newest now), so the reused prefix ends before the first of them.
 */
function beforeWithdrawal(bodyMsg: number | undefined, edits: readonly Edit[], spans: readonly Span[]): number | undefined {
  const first = edits.find((e) => e.withdrawal);
  if (bodyMsg === undefined || !first) return bodyMsg;
  const holder = spans.findIndex((s) => s.start <= first.start && first.start < s.end);
  return holder < 0 ? bodyMsg : Math.min(bodyMsg, holder);
}

/** The previous output's first `outEnd` characters, cut from its pieces when it kept them. */
function outputBefore(enc: Encoded, outEnd: number): Pick<ReusedPrefix, 'outPrefix' | 'outChunks'> {
  // Slicing the previous output's rope would copy all of it; its pieces are flat.
  const outChunks = enc.chunks && cutChunks(enc.chunks, outEnd);
  return outChunks ? { outPrefix: chunkText(outChunks), outChunks } : { outPrefix: enc.result.raw.slice(0, outEnd) };
}

/**
 * The output as pieces with bytes: the reused prefix's pieces plus the newly encoded rest; the
 * inbound bytes for an unchanged body; otherwise the whole output encoded (a cold turn).
 */
function outChunks(turn: DecodedTurn, result: EncodeResult, plan: EncodePlan, reused: ReusedPrefix | null): OutChunks | undefined {
  if (plan.afterPrefix !== undefined && reused?.outChunks) return appendText(reused.outChunks, plan.afterPrefix);
  // An unchanged result is the view's own text (a content comparison would flatten both ropes).
  if (!result.changed) return turn.bytes && chunksOf(result.raw, turn.bytes.buf);
  return chunksOf(result.raw);
}
