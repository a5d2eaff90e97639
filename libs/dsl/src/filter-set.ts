// A loaded set of filters in match order (priority descending, then name). Names are unique across
// every document in the set: a silently shadowed filter is a debugging trap, so a duplicate is an
// error naming both places.
import type { ParsedDocument } from './document';
import { DslError } from './errors';
import { type CompiledFilter, type FilterResult, compareFilters, filterMatches } from './filter';
import { outputSelector, selectorCandidates } from './selector';
import { applyFilter } from './stages';

export interface Selection {
  filter: CompiledFilter;
  /** The output's first non-empty line ('' when the output is blank). */
  selector: string;
}

export class FilterSet {
  readonly filters: readonly CompiledFilter[];
  private readonly byName: ReadonlyMap<string, CompiledFilter>;

  constructor(docs: readonly ParsedDocument[]) {
    const byName = new Map<string, CompiledFilter>();
    for (const doc of docs) {
      for (const f of doc.filters) {
        const first = byName.get(f.name);
        if (first) {
          throw new DslError(
            'duplicate_filter',
            { source: f.source, line: f.line, filter: f.name, field: 'filters' },
            `duplicate filter name (already defined at ${first.source}:${first.line})`,
          );
        }
        byName.set(f.name, f);
      }
    }
    this.byName = byName;
    this.filters = [...byName.values()].sort(compareFilters);
  }

  get size(): number {
    return this.filters.length;
  }

  get(name: string): CompiledFilter | undefined {
    return this.byName.get(name);
  }

  /** The first filter, in match order, whose `match` selects this output (or its command). */
  select(output: string, command?: string): Selection | undefined {
    const candidates = selectorCandidates(output, command);
    if (candidates.length === 0) return undefined;
    const filter = this.filters.find((f) => filterMatches(f, candidates));
    return filter ? { filter, selector: outputSelector(output).line } : undefined;
  }

  /** Selects and applies in one step; undefined when no filter matches. */
  apply(output: string, command?: string): (FilterResult & { filter: CompiledFilter }) | undefined {
    const sel = this.select(output, command);
    return sel ? { ...applyFilter(sel.filter, output), filter: sel.filter } : undefined;
  }
}
