// A tenant's config may change mid-session (a preset switch, a rollback, a new filter set). The
// provider has cached what the gateway forwarded under the old version, so those bytes must come
// back byte-identical even when the new pipeline lacks the component that made them (mask gone
// after a switch from `agent` to `balanced`) or would reformat them differently. The gateway
// therefore remembers, per session, the text it forwarded for each tool output it rewrote
// (a frozen slot under the pseudo-component `forwarded#<position>`, keyed by the received
// content: the same output twice in a transcript may be forwarded differently, e.g. dedup), and
// replays it over the provider-cached prefix whatever the current pipeline did; the current
// version governs only the uncached tail. The cache guard then allows exactly those indices.
// A record carries the revision of the pipeline that made it: while that pipeline still serves,
// its own components replay their decisions (and may deliberately differ, e.g. un-masking content
// the model asked back for), so only a record from another revision is replayed here.
import {
  cloneMessage,
  contentKey,
  frozenMarkerId,
  markerIds,
  messageText,
  setText,
  type BufferedStash,
  type CacheView,
  type Message,
  type SessionView,
  type TurnRecord,
} from '@context-guru/components';

const FORWARDED = 'forwarded';

/** The slot's component part: per position, so two copies of one output never trade bytes. */
function slotOf(i: number): string {
  return `${FORWARDED}#${i}`;
}

function decodeRecord(value: string): { revision: string; text: string } {
  const nl = value.indexOf('\n');
  return nl < 0 ? { revision: '', text: value } : { revision: value.slice(0, nl), text: value.slice(nl + 1) };
}

/** The text last turn forwarded for tool output `original` at position i, when it was rewritten. */
export function forwardedText(state: SessionView, original: Message | undefined, i: number): string | undefined {
  const text = original?.role === 'tool' ? messageText(original) : null;
  if (!text) return undefined;
  const record = state.frozen(slotOf(i), contentKey(text));
  return record === undefined ? undefined : decodeRecord(record).text;
}

/** Restores last turn's forwarded text on cached tool outputs; returns how many it changed. */
export function replayForwarded(
  input: readonly Message[],
  output: Message[],
  cache: CacheView,
  prev: TurnRecord | null,
  state: SessionView,
  stash: BufferedStash,
  revision: string,
): number {
  if (!cache.aware || cache.cold || cache.maxCachedIdx < 0 || !prev?.rewritten || output.length !== input.length) return 0;
  let n = 0;
  for (const i of prev.rewritten) {
    const original = input[i];
    const forwarded = output[i]; // same length as input
    if (i > cache.maxCachedIdx || original?.role !== 'tool' || forwarded === undefined) continue;
    const text = messageText(original);
    if (!text) continue;
    const ck = contentKey(text);
    // The model asked for this content back: kept-verbatim marks keep their meaning.
    if (state.keptVerbatim(ck)) continue;
    const record = state.frozen(slotOf(i), ck);
    if (record === undefined) continue;
    const { revision: madeBy, text: sent } = decodeRecord(record);
    if (madeBy === revision || messageText(forwarded) === sent) continue;
    const m = cloneMessage(forwarded);
    setText(m, sent);
    output[i] = m;
    // The marker inside stays resolvable: its original is stashed again (refreshing its TTL).
    const id = stash.persistent ? frozenMarkerId(markerIds(sent), text, stash) : undefined;
    if (id !== undefined) stash.put(text, id);
    n++;
  }
  return n;
}

/**
 * Remembers the forwarded text of every rewritten tool output. Only a new or changed record is
 * written (the view compares with what it loaded), so a lost record is repaired on the next turn.
 */
export function recordForwarded(
  input: readonly Message[],
  output: readonly Message[],
  rewritten: readonly number[],
  state: SessionView,
  revision: string,
): void {
  for (const i of rewritten) {
    const original = input[i];
    const forwarded = output[i];
    if (original?.role !== 'tool' || forwarded === undefined) continue;
    const text = messageText(original);
    const sent = messageText(forwarded);
    if (!text || sent === null || sent === text) continue;
    const ck = contentKey(text);
    const known = state.frozen(slotOf(i), ck);
    // Same bytes already recorded (by whichever revision made them): keep the maker's revision.
    if (known !== undefined && decodeRecord(known).text === sent) continue;
    state.freeze(slotOf(i), ck, `${revision}\n${sent}`);
  }
}
