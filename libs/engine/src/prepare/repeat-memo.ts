// A turn byte-identical to one already prepared on the same session (a client retry, an agent
// re-sending after an error, a benchmark) should cost little more than the pass-through. The full
// path is a pure function of the inbound bytes, the tenant's config, the store's answers for the
// session (the previous turn's record and the decisions loaded for the body's content) and the
// cache view those give; so this memo keeps, per session, the last prepared turn with every input
// its run consumed, and a later identical body reuses the forwarded bytes only when the store
// answers exactly what the remembered run saw. The store is still read and written as the full
// path would (turn advance, decision TTLs, originals, rewrites): only decode, pipeline and encode
// are skipped. A run that changed the session (new decisions, the expand tool, an arm), read keys
// its prefetch missed, or asked a model is not remembered, so a hit never owes the store a commit.
import { sameList, type CacheView, type SessionSnapshot, type TurnRecord } from '@context-guru/components';
import { joinedIfSmall } from '../wire/out-chunks';
import type { TurnCache as CachedTurn } from '../session/cache-view';
import type { LoadedSession } from '../session/session-run';
import type { PrepareInput, RepeatEntry, RepeatSlot, Repeats } from './prepare.types';

/** Up to this many sessions' last turns are kept (each holds strings the turn cache shares). */
const MAX_ENTRIES = 2048;
/**
 * Turns kept per session, newest: a client re-sends its last body (a retry), or alternates it with
 * a side request of its own. A growing session's older turns never come again, and each held its
 * whole decoded view, uncounted by the character budget, until the budget pushed it out.
 */
const TURNS_PER_SESSION = 2;

export class RepeatMemo implements Repeats {
  private readonly entries = new Map<string, RepeatEntry>();
  /** Each session's entry keys, oldest first (at most TURNS_PER_SESSION). */
  private readonly turnsOf = new Map<string, string[]>();
  private chars = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly maxChars = 16 * 1024 * 1024) {}

  /**
   * The text of a body this session sent before, recognised on its bytes: a repeat is then neither
   * decoded nor compared character by character (find sees the very string it remembered).
   */
  textOf(slot: RepeatSlot, bytes: Buffer): string | undefined {
    if (slot.bypassHeader) return undefined;
    const e = this.entries.get(keyOf(slot, bytes.length));
    return e?.bytes?.equals(bytes) ? e.raw : undefined;
  }

  /** The remembered turn whose bytes, tenant config and request options are this request's. */
  find(input: PrepareInput): RepeatEntry | undefined {
    if (input.bypassHeader) return undefined;
    const key = keyOf(input, sizeOf(input));
    const e = this.entries.get(key);
    if (!e || e.raw !== input.raw || e.tenant !== input.tenant || e.pipeline !== input.pipeline || e.cacheMode !== input.cacheMode)
      return undefined;
    // Most recently used last: eviction takes the oldest first.
    this.entries.delete(key);
    this.entries.set(key, e);
    return e;
  }

  remember(input: PrepareInput, entry: RepeatEntry): void {
    const key = keyOf(input, sizeOf(input));
    this.forget(key);
    const size = chars(entry);
    if (size > this.maxChars) return;
    this.entries.set(key, entry);
    this.chars += size;
    const session = sessionOf(key);
    const turns = this.turnsOf.get(session) ?? [];
    turns.push(key);
    this.turnsOf.set(session, turns);
    for (const older of turns.slice(0, -TURNS_PER_SESSION)) this.forget(older);
    for (const old of this.entries.keys()) {
      if (this.chars <= this.maxChars && this.entries.size <= MAX_ENTRIES) break;
      this.forget(old);
    }
  }

  /** An entry that no longer holds for its session (the store moved on) is dropped. */
  forget(key: string | PrepareInput): void {
    const k = typeof key === 'string' ? key : keyOf(key, sizeOf(key));
    const e = this.entries.get(k);
    if (!e) return;
    this.entries.delete(k);
    this.chars -= chars(e);
    const session = sessionOf(k);
    const turns = this.turnsOf.get(session)?.filter((t) => t !== k) ?? [];
    if (turns.length) this.turnsOf.set(session, turns);
    else this.turnsOf.delete(session);
  }
}

/** The session part of an entry key (everything before the size). */
function sessionOf(key: string): string {
  return key.slice(0, key.lastIndexOf('\u0000'));
}

/** The session as far as it is known before decoding, and the body's size in bytes (identity is checked on the body). */
function keyOf(slot: RepeatSlot, size: number): string {
  const conversation = slot.dialect === 'responses' ? `\u0000${slot.conversationHeader ?? ''}` : '';
  return `${slot.tenant.id}\u0000${slot.dialect}\u0000${slot.shed === true}\u0000${slot.sessionHeader ?? ''}${conversation}\u0000${size}`;
}

function sizeOf(input: PrepareInput): number {
  return input.bytes?.length ?? Buffer.byteLength(input.raw, 'utf8');
}

/** The forwarded bytes of a remembered turn, encoded once for all its replays. */
export function forwardedBytes(e: RepeatEntry): Buffer | readonly Buffer[] {
  if (e.outgoing === e.raw && e.bytes) return e.bytes;
  const bytes = e.outgoingBytes ?? Buffer.from(e.outgoing, 'utf8');
  // Joined here once for every replay, not by the send on each (see JOIN_BELOW_BYTES).
  return (e.outgoingBytes = Buffer.isBuffer(bytes) ? bytes : joinedIfSmall(bytes));
}

/** Held text and bytes; a rewritten body counts twice, as text and as the bytes its replays send. */
function chars(e: RepeatEntry): number {
  return e.raw.length + (e.bytes?.length ?? 0) + (e.outgoing === e.raw ? 0 : 2 * e.outgoing.length);
}

/** Whether the store answered this turn what it answered the remembered run (so the run would repeat). */
export function storeAnswersAgain(e: RepeatEntry, prev: TurnRecord | null, cached: CachedTurn, loaded: LoadedSession): boolean {
  return sameTurn(e.prev, prev) && sameCache(e.cached, cached) && sameLoad(e.loaded, loaded);
}

function sameTurn(a: TurnRecord | null, b: TurnRecord | null): boolean {
  if (a === null || b === null) return a === b;
  // `at` only matters through the cache view's cold reading, compared on its own.
  return a.n === b.n && a.ttlMs === b.ttlMs && sameRewrites(a.rewritten, b.rewritten);
}

function sameRewrites(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  return a === undefined || b === undefined ? a === b : sameList(a, b);
}

function sameCache(a: CachedTurn, b: CachedTurn): boolean {
  return sameView(a.view, b.view) && a.compactionReset === b.compactionReset && a.ttlMs === b.ttlMs;
}

function sameView(a: CacheView, b: CacheView): boolean {
  return a.aware === b.aware && a.maxCachedIdx === b.maxCachedIdx && a.cold === b.cold;
}

function sameLoad(a: LoadedSession, b: LoadedSession): boolean {
  return a === b || (sameSet(a.asked, b.asked) && sameSnapshot(a.snapshot, b.snapshot));
}

function sameSnapshot(a: SessionSnapshot, b: SessionSnapshot): boolean {
  if ((a.offloaded === true) !== (b.offloaded === true) || a.arm !== b.arm) return false;
  if (!sameSet(a.lost, b.lost) || !sameSet(a.kept, b.kept) || a.frozen.size !== b.frozen.size) return false;
  for (const [slot, text] of a.frozen) if (b.frozen.get(slot) !== text) return false;
  return true;
}

function sameSet<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}
