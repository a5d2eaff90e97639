// "Does this request carry placeholders?" is answered from the raw bytes of `messages` and `system`
// only: the expand tool's own description quotes the marker syntax, so scanning the whole body
// would always say yes. JSON may escape `<` `>` as \u003c \u003e (any hex case), so both forms count.
import type { RawIndex, Span } from './json-scan';

const LT = String.raw`(?:<|\\u003[cC])`;
const GT = String.raw`(?:>|\\u003[eE])`;
export const RAW_MARKER_RE = new RegExp(`${LT}${LT}cg:[A-Za-z0-9_-]{1,64}${GT}${GT}`, 'g');
/** ⟪cg⟫ raw or as \u27ea / \u27eb escapes. */
export const RAW_SENTINEL_RE = /(?:⟪|\\u27[eE][aA])cg(?:⟫|\\u27[eE][bB])/g;

function inside(pos: number, spans: readonly Span[]): boolean {
  return spans.some((s) => pos >= s.start && pos < s.end);
}

/**
 * Position of the first match of `re` at or after `from` that lies inside `messages` or `system`,
 * or -1; the index is walked only on a hit.
 */
export function firstFieldMatch(index: RawIndex, re: RegExp, from = 0): number {
  const raw = index.raw;
  const g = new RegExp(re.source, 'g');
  g.lastIndex = from;
  let spans: Span[] | undefined;
  for (let m = g.exec(raw); m; m = g.exec(raw)) {
    spans ??= [index.topLevel('messages'), index.topLevel('system')].filter((s): s is Span => s !== undefined);
    if (inside(m.index, spans)) return m.index;
  }
  return -1;
}
