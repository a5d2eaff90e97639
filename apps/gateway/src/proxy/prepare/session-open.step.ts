// Step 2: where this turn stands — the store's record of the previous turn (advanced to this one)
// and what the session already decided about this request's content, read together.
import { SUMMARY_CHECKPOINT_KEY, contentKey, messageText, type TurnRecord } from '@context-guru/components';
import { trailKeys } from '../../expand/trail-edits';
import { cacheViewFor, isCacheAware, requestTtlMs, type TurnCache as CachedTurn } from '../../session/cache-view';
import { conversationKey } from '../../session/conversation-key';
import { loadSessionFor, type LoadedSession } from '../../session/session-run';
import type { Decoded } from './decode.step';
import type { Preparing } from './prepare.types';

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
}

export function turnAt(p: Preparing, d: Decoded): TurnAt {
  const { deps, input } = p;
  const mark = {
    n: d.view.messages.length,
    at: deps.clock.now(),
    ttlMs: requestTtlMs(input.dialect, d.view.body, d.view.firstOneHourAt >= 0),
  };
  return { conversation: conversationKey(d.session, d.view), mark };
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

/** `known`: the keys of these very bytes, computed on an earlier turn. */
export async function openSession(p: Preparing, d: Decoded, at: TurnAt, known?: readonly string[]): Promise<OpenedSession> {
  const { deps, input, report } = p;
  const tenant = input.tenant.id;
  const keys = known ?? sessionKeys(d);
  // The turn advance and the session load are independent reads: issued together, they share
  // one round trip to a remote store.
  const loading = loadSessionFor({ store: deps.store, tenant, session: d.session, keys, learned: p.learned });
  const [prev, loaded] = await Promise.all([deps.store.advanceTurn(tenant, at.conversation, at.mark), loading]);
  const cached = cacheViewFor(prev, at.mark.n, isCacheAware(input.cacheMode), at.mark.at, at.mark.ttlMs);
  report.compactionReset = cached.compactionReset;
  return { keys, prev, loaded, cached };
}
