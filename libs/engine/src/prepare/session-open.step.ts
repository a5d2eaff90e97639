// Step 2: where this turn stands — the store's record of the previous turn (advanced to this one)
// and what the session already decided about this request's content, read together.
import { SUMMARY_CHECKPOINT_KEY, contentKey, messageText, type TurnRecord } from '@context-guru/components';
import { trailKeys } from '../expand/trail-edits';
import { cacheViewFor, isCacheAware, requestTtlMs, type TurnCache as CachedTurn } from '../session/cache-view';
import { conversationKey } from '../session/conversation-key';
import { loadSessionFor, type LoadedSession } from '../session/session-run';
import type { Preparing, LoadStamp } from './prepare.types';
import type { Decoded } from './prepare.types';

/** This turn as the store records it, under its conversation's key. */
export interface TurnAt {
  conversation: string;
  mark: TurnRecord;
}

export interface OpenedSession {
  /** Content keys of the tool outputs as received, plus the summary checkpoint's. */
  keys: readonly string[];
  /** The previous turn's record, null on a conversation's first turn. */
  prev: TurnRecord | null;
  loaded: LoadedSession;
  /** The provider-cached prefix this turn may not change. */
  cached: CachedTurn;
  /** What vouches for `loaded` on a later identical turn (see RepeatEntry.load). */
  load: LoadStamp;
}

/**
 * How long a repeated turn may leave the store's TTLs where they are: re-reading its decisions and
 * re-putting its originals only slide TTLs of hours, which the in-process store already ignores
 * below a second; a session re-sent many times a second paid ~35 µs a turn for them.
 */
const RESLIDE_AFTER_MS = 1000;

/** `at` is less than RESLIDE_AFTER_MS before `now` (a clock that went back does not count). */
export function slidLately(at: number, now: number): boolean {
  return now >= at && now - at < RESLIDE_AFTER_MS;
}

export function turnAt(p: Preparing, d: Decoded): TurnAt {
  const { deps, input } = p;
  const mark = {
    n: d.view.messages.length,
    at: deps.clock.now(),
    ttlMs: requestTtlMs(input.dialect, d.view.body, d.view.firstOneHourAt >= 0),
  };
  return { conversation: conversationKey(d.session, d.view, p.names), mark };
}

/** Bypassed turns still advance the boundary: the provider cached what we forwarded. */
export async function advanceBypassed(p: Preparing, at: TurnAt): Promise<void> {
  await p.deps.store.advanceTurn(p.input.tenant.id, at.conversation, at.mark);
}

/** Content keys of the tool outputs as received, then the summary checkpoint's and the trails'. */
function sessionKeys(d: Decoded): string[] {
  const keys: string[] = [];
  for (const m of d.view.messages) {
    if (m.role !== 'tool') continue;
    const text = messageText(m);
    if (text) keys.push(contentKey(text));
  }
  keys.push(SUMMARY_CHECKPOINT_KEY, ...trailKeys(d.view));
  return keys;
}

/** A turn remembered for these very bytes: its keys, and the load it made with what vouches for it. */
export interface KnownTurn {
  readonly keys: readonly string[];
  readonly loaded: LoadedSession;
  readonly load: LoadStamp;
}

/** `known`: an earlier turn of these very bytes. */
export async function openSession(p: Preparing, d: Decoded, at: TurnAt, known?: KnownTurn): Promise<OpenedSession> {
  const { deps, input, report } = p;
  const keys = known?.keys ?? sessionKeys(d);
  // The turn advance and the session load are independent reads: issued together, they share
  // one round trip to a remote store.
  const reuse = known !== undefined && loadHolds(p, d.session, known.load, at.mark.at);
  const [load, loading] = reuse ? [{ ...known.load, reused: true }, known.loaded] : startLoad(p, d.session, keys, at.mark.at);
  const [prev, loaded] = await Promise.all([deps.store.advanceTurn(input.tenant.id, at.conversation, at.mark), loading]);
  const cached = cacheViewFor(prev, at.mark.n, isCacheAware(input.cacheMode), at.mark.at, at.mark.ttlMs);
  report.compactionReset = cached.compactionReset;
  return { keys, prev, loaded, cached, load };
}

/** The session load for `keys`, with the stamp read just before it (nothing runs in between). */
function startLoad(p: Preparing, session: string, keys: readonly string[], now: number): [LoadStamp, Promise<LoadedSession>] {
  const { deps, input, learned } = p;
  const tenant = input.tenant.id;
  const load = { stamp: deps.store.sessionStamp?.(tenant, session), generation: learned.generation, at: now, reused: false };
  return [load, loadSessionFor({ store: deps.store, tenant, session, keys, learned })];
}

/** A load the store still vouches for, made lately, with no key learned since. */
function loadHolds(p: Preparing, session: string, l: LoadStamp, now: number): boolean {
  if (l.stamp === undefined || p.learned.generation !== l.generation || !slidLately(l.at, now)) return false;
  return p.deps.store.sessionStamp?.(p.input.tenant.id, session) === l.stamp;
}

/** The session as the store answers now: a reused load is read again before a pipeline runs on it. */
export async function freshLoad(p: Preparing, d: Decoded, s: OpenedSession, now: number): Promise<OpenedSession> {
  if (!s.load.reused) return s;
  const [load, loading] = startLoad(p, d.session, s.keys, now);
  return { ...s, load, loaded: await loading };
}
