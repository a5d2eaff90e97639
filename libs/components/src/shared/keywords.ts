// Query keywords for relevance-based components: lowercase alphanumeric words longer than three
// characters, minus words that appear in almost any request. One definition so extract and
// phi_evict agree on what "relevant to the task" means.
import { MARKER_RE } from './marker';

const STOPWORDS = new Set([
  'about',
  'above',
  'after',
  'again',
  'also',
  'because',
  'been',
  'before',
  'being',
  'below',
  'between',
  'both',
  'cannot',
  'could',
  'does',
  'doing',
  'done',
  'down',
  'each',
  'every',
  'false',
  'from',
  'further',
  'have',
  'having',
  'help',
  'here',
  'into',
  'just',
  'know',
  'like',
  'look',
  'make',
  'more',
  'most',
  'much',
  'need',
  'next',
  'none',
  'null',
  'okay',
  'only',
  'onto',
  'other',
  'over',
  'please',
  'same',
  'should',
  'since',
  'some',
  'such',
  'sure',
  'than',
  'thanks',
  'that',
  'their',
  'them',
  'then',
  'there',
  'these',
  'they',
  'think',
  'this',
  'those',
  'through',
  'true',
  'under',
  'until',
  'upon',
  'used',
  'using',
  'very',
  'want',
  'were',
  'what',
  'when',
  'where',
  'which',
  'while',
  'will',
  'with',
  'within',
  'without',
  'would',
  'your',
  'yours',
]);

const WORD_RE = /[a-z0-9]+/g;

/** Keyword set of a query text. */
export function keywords(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.replace(MARKER_RE, ' ').toLowerCase().match(WORD_RE) ?? []) {
    if (w.length > 3 && !STOPWORDS.has(w)) out.add(w);
  }
  return out;
}

/** Words of a line (same tokenization as keywords), for overlap tests. */
function lineWords(text: string): string[] {
  return text.toLowerCase().match(WORD_RE) ?? [];
}

/**
 * The keywords a line mentions: as a whole word, or — for keywords of six or more characters —
 * inside a longer identifier ("timeout" in ReadTimeoutError), where a false hit is unlikely.
 */
export function mentionedKeys(line: string, keys: ReadonlySet<string>, longKeys: readonly string[]): string[] {
  if (keys.size === 0) return [];
  const lower = line.toLowerCase();
  const hit = new Set<string>();
  for (const w of lower.match(WORD_RE) ?? []) if (keys.has(w)) hit.add(w);
  for (const k of longKeys) if (!hit.has(k) && lower.includes(k)) hit.add(k);
  return [...hit];
}

/** The keywords long enough to match inside identifiers. */
export function longKeywords(keys: ReadonlySet<string>): string[] {
  return [...keys].filter((k) => k.length >= 6);
}

/** Fraction of keys present (as words) in a text; 0 when there are no keys. */
export function keywordOverlap(text: string, keys: ReadonlySet<string>): number {
  if (keys.size === 0) return 0;
  const words = new Set(lineWords(text));
  let hit = 0;
  for (const k of keys) if (words.has(k)) hit++;
  return hit / keys.size;
}
