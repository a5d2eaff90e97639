// The last line of defence for the provider's prompt cache: on a warm turn, a message inside the
// cached prefix may differ from what the client sent only where the previous turn's forwarded body
// differed too (a replayed decision). Any other change at depth — a content-keyed replay landing
// on a later copy of the same text, a component bug — would re-bill the whole suffix as a cache
// write, so it is reverted here, whatever component made it.
import { cloneMessage, sameMessage, type CacheView, type ContentBlock, type Message, type TurnRecord } from '@context-guru/components';

/** Equal as far as the provider's cache key goes: a moved or added breakpoint changes nothing. */
function sameCachedContent(a: Message | undefined, b: Message | undefined): boolean {
  if (sameMessage(a, b)) return true;
  if (!a || !b) return false;
  return sameMessage(withoutBreakpoints(a), withoutBreakpoints(b));
}

/** The message with no cache_control on its blocks or its tool calls (tool_use blocks). */
function withoutBreakpoints(m: Message): Message {
  const out: Message = { ...m };
  if (Array.isArray(m.content)) {
    out.content = m.content.map((blk) => {
      const { cache_control: _dropped, ...rest } = blk as ContentBlock & { cache_control?: unknown };
      return rest as ContentBlock;
    });
  }
  if (m.tool_calls) out.tool_calls = m.tool_calls.map(({ cache_control: _dropped, ...call }) => call);
  return out;
}

/** `planned`: the indices a priced rewrite changes this turn (rewrite-planner), allowed too. */
export function guardCachedPrefix(
  input: readonly Message[],
  output: Message[],
  cache: CacheView,
  prev: TurnRecord | null,
  planned: readonly number[] = [],
): number[] {
  if (!cache.aware || cache.cold || cache.maxCachedIdx < 0 || !prev?.rewritten || output.length !== input.length) return [];
  const allowed = new Set([...prev.rewritten, ...planned]);
  const reverted: number[] = [];
  const last = Math.min(cache.maxCachedIdx, input.length - 1);
  for (let i = 0; i <= last; i++) {
    const sent = input[i];
    if (sent === undefined) break; // i ≤ input.length - 1
    if (allowed.has(i) || sameCachedContent(sent, output[i])) continue;
    output[i] = cloneMessage(sent);
    reverted.push(i);
  }
  return reverted;
}

/** Indices whose forwarded bytes differ from the client's: what the provider will have cached. */
export function rewrittenIndices(input: readonly Message[], output: readonly Message[], discarded: readonly number[]): number[] {
  if (output.length !== input.length) return [];
  const kept = new Set(discarded);
  const out: number[] = [];
  for (let i = 0; i < input.length; i++) if (!kept.has(i) && !sameCachedContent(input[i], output[i])) out.push(i);
  return out;
}
