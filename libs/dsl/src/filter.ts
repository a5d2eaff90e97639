// A compiled filter: every pattern already an RE2 Pattern, every field validated. Instances are
// built once per document load and are immutable, so applying one is a pure function of the input.
import type { Pattern } from './regex';

/** What a filter did to its input; decides the recovery hint the wrapping offloader appends. */
export type Lossiness = 'none' | 'tail' | 'whole';

export const Lossiness = {
  /** Nothing dropped, or only reformatting (ANSI colours, blank lines, whitespace). */
  None: 'none',
  /** One clean contiguous tail dropped: everything before the cut is present. */
  Tail: 'tail',
  /** Non-contiguous loss, edited lines, or the whole blob replaced by a message. */
  Whole: 'whole',
} as const satisfies Record<string, Lossiness>;

export interface ReplaceRule {
  pattern: Pattern;
  replacement: string;
}

export interface MatchOutputRule {
  pattern: Pattern;
  message: string;
  unless?: Pattern;
}

export interface CompiledFilter {
  readonly name: string;
  /** The document the filter came from and the line of its name there. */
  readonly source: string;
  readonly line: number;
  readonly description: string;
  readonly family: string;
  readonly priority: number;
  readonly match: Pattern;
  readonly stripAnsi: boolean;
  readonly replace: readonly ReplaceRule[];
  readonly matchOutput: readonly MatchOutputRule[];
  readonly stripLines: readonly Pattern[];
  readonly keepLines: readonly Pattern[];
  readonly truncateLinesAt?: number;
  readonly headLines?: number;
  readonly tailLines?: number;
  readonly maxLines?: number;
  readonly onEmpty?: string;
}

export interface FilterResult {
  output: string;
  loss: Lossiness;
  /** For Tail loss: how many leading lines of the original input the output still holds. */
  keptLines: number;
}

/** A filter is selected when its `match` finds any of the selector candidates. */
export function filterMatches(f: CompiledFilter, candidates: readonly string[]): boolean {
  return candidates.some((c) => f.match.test(c));
}

/** Priority descending, then name: the order in which filters are tried (first match wins). */
export function compareFilters(a: CompiledFilter, b: CompiledFilter): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
