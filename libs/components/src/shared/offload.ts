// The steps every Offload shares: gate counting, the provider-cache tail gate, replay of frozen
// decisions, and the marker-inclusive never-worse commit that stashes before it rewrites.
import type { Ctx, GateHistogram, Message } from '../component';
import { frozenMarkerId } from '../ports/stash.port';
import { type MarkerMode, contentKey, hasPlaceholder, markerIds, markerToken } from './marker';
import { messageText, setText } from './message-text';
import { countTokens } from './tokens';

export class Gates {
  readonly counts: GateHistogram = {};
  add(gate: string): void {
    this.counts[gate] = (this.counts[gate] ?? 0) + 1;
  }
}

/**
 * May a NEW lossy decision touch message i? Only outside the provider's cached prefix, unless the
 * component opted into cold_cache and the cache provably expired, or a frozen decision for this
 * content was lost and the component re-derives it (its output is a pure function of content), or
 * the gateway prices this turn's rewrites (`ctx.depth`) and the component passes the message as it
 * stands (`priced`), so a rejected proposal can be put back exactly.
 */
export function tailAllows(i: number, ctx: Ctx, coldOptIn: boolean, lostRepair = false, priced?: Message): boolean {
  const { aware, maxCachedIdx, cold } = ctx.cache;
  if (!aware || maxCachedIdx < 0 || i > maxCachedIdx) return true;
  if ((coldOptIn && cold) || lostRepair) return true;
  // A component whose semantics need age or supersession may propose a decision at depth when the
  // gateway prices rewrites: the planner keeps it only where it pays (docs/cache.md).
  return priced !== undefined && ctx.depth !== undefined && ctx.depth.propose(i, priced);
}

export type ReplayResult = { kind: 'kept' } | { kind: 'miss' } | { kind: 'replayed'; id?: string } | { kind: 'stale' };

/**
 * Replays an earlier decision byte-identically, regardless of depth, so the bytes a provider has
 * cached never change. The original is stashed again so the marker inside stays resolvable.
 * Content the model expanded (kept verbatim) is never reduced anew, but a decision the provider
 * already holds at message i still replays: the model has the original from its expand call,
 * which the gateway re-inserts on every later turn (docs/cache.md), and un-masking it there
 * would re-bill everything after it.
 */
export function replayFrozen(component: string, m: Message, text: string, ctx: Ctx, i: number): ReplayResult {
  const ck = contentKey(text);
  if (ctx.state.keptVerbatim(ck) && !(inCachedPrefix(i, ctx) && ctx.state.frozen(component, ck) !== undefined)) return { kind: 'kept' };
  const rep = ctx.state.frozen(component, ck);
  ctx.state.countReplay(rep !== undefined);
  if (rep === undefined) return { kind: 'miss' };
  if (countTokens(rep) >= countTokens(text)) return { kind: 'stale' };
  let id = frozenMarkerId(markerIds(rep), text, ctx.stash);
  if (id !== undefined) {
    if (!ctx.stash.persistent) return { kind: 'stale' };
    id = ctx.stash.put(text, id);
  }
  setText(m, rep);
  return { kind: 'replayed', id };
}

/** The message's text, or null after counting `non_text_blocks` (a rewrite would drop blocks). */
export function rewritableText(m: Message, gates: Gates): string | null {
  const text = messageText(m);
  if (text === null) gates.add('non_text_blocks');
  return text;
}

/** Message i is in the provider's cached prefix: what it was forwarded as must not change. */
function inCachedPrefix(i: number, ctx: Ctx): boolean {
  return ctx.cache.aware && i <= ctx.cache.maxCachedIdx;
}

/**
 * Already offloaded (carries a marker or the sentinel), or asked back by the model: never reduce.
 * Kept-verbatim applies where the message is new to the provider; in its cached prefix a stateless
 * offloader does what it did there before (the cache guard reverts any change the previous turn
 * did not make), since un-reducing a message there would re-bill everything after it.
 */
export function markedOrKept(text: string, ctx: Ctx, i: number): boolean {
  return hasPlaceholder(text) || (ctx.state.keptVerbatim(contentKey(text)) && !inCachedPrefix(i, ctx));
}

/**
 * Replay first, then the marker / kept-verbatim gate — the opening every position-aware offloader
 * shares. True when the message is settled (replayed, or passed over under a counted gate).
 */
export function settledByReplay(
  component: string,
  m: Message,
  text: string,
  ctx: Ctx,
  gates: Gates,
  tally: OffloadTally,
  i: number,
): boolean {
  const replay = replayFrozen(component, m, text, ctx, i);
  if (replay.kind === 'replayed') {
    tally.record(replay);
    return true;
  }
  if (replay.kind === 'kept' || hasPlaceholder(text)) {
    gates.add('marker_or_kept_verbatim');
    return true;
  }
  return false;
}

export interface CommitResult {
  ok: boolean;
  id?: string;
  irreversible?: boolean;
}

/**
 * Writes `build(token)` over message m only if it has strictly fewer tokens than the original
 * (marker and hint included). In full mode the original is stashed first; a store that cannot
 * persist degrades full to off so no unresolvable marker is ever emitted; a stash that is full
 * (the tenant's byte budget) refuses the rewrite.
 */
export function commitOffload(
  m: Message,
  original: string,
  build: (token: string) => string,
  ctx: Ctx,
  mode: MarkerMode,
  hint: string,
  freezeAs?: string,
): CommitResult {
  const effective: MarkerMode = mode === 'full' && !ctx.stash.persistent ? 'off' : mode;
  // No room for a new original: the output stays as it is rather than lose it or mint a dead marker.
  if (effective === 'full' && ctx.stash.full === true) return { ok: false };
  const id = ctx.stash.idOf(original);
  const candidate = build(markerToken(effective, id, hint));
  if (countTokens(candidate) >= countTokens(original)) return { ok: false };
  if (effective === 'full') ctx.stash.put(original);
  setText(m, candidate);
  if (freezeAs) ctx.state.freeze(freezeAs, contentKey(original), candidate);
  return effective === 'full' ? { ok: true, id } : { ok: true, irreversible: true };
}

/** Folds a list of commit results into an outcome's keys / irreversible flag. */
export class OffloadTally {
  readonly keys: string[] = [];
  irreversible = false;
  record(r: { ok?: boolean; id?: string; irreversible?: boolean }): void {
    if (r.id) this.keys.push(r.id);
    if (r.irreversible) this.irreversible = true;
  }
}
