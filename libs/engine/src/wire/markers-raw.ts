// "Does this request carry placeholders?" is answered from the raw bytes of `messages` and `system`
// (the Responses API's `input` and `instructions`) only: the expand tool's own description quotes the marker syntax, so scanning the whole body
// would always say yes. JSON may escape `<` `>` as \u003c \u003e (any hex case), so both forms count.
import type { Span } from './json-scan';
import type { RawIndex } from './raw-index';

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
/** Where each body shape keeps its system prompt, by its list of turns. */
const SYSTEM_KEY: Record<string, string> = { messages: 'system', input: 'instructions', contents: 'systemInstruction' };

export function firstFieldMatch(index: RawIndex, re: RegExp, from = 0): number {
  const text = index.text;
  const g = new RegExp(re.source, 'g');
  let spans: Span[] | undefined;
  // Piece by piece: a marker or sentinel lies inside one JSON string, so inside one piece.
  for (let pos = Math.min(from, text.length); pos < text.length;) {
    const { s, at } = text.local(pos);
    g.lastIndex = pos - at;
    for (let m = g.exec(s); m; m = g.exec(s)) {
      spans ??= [index.topLevel(index.listKey), index.topLevel(SYSTEM_KEY[index.listKey] ?? 'system')].filter(
        (x): x is Span => x !== undefined,
      );
      if (inside(m.index + at, spans)) return m.index + at;
    }
    pos = at + s.length;
  }
  return -1;
}
