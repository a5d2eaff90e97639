// Inline tests ship a filter with its own regression check. A test input is a transcript: its
// first line is the command that ran (a leading `$ ` is optional; a blank first line means the
// command is unknown) and the rest is what the command printed — the same pair cmdfilter sees at
// run time (the tool call's command, the tool output). A test passes when its transcript selects
// the filter and the filtered output equals `expected`, trailing newlines aside.
import type { InlineTest, ParsedDocument } from './document';
import { type CompiledFilter, filterMatches } from './filter';
import { selectorCandidates } from './selector';
import { applyFilter } from './stages';

export interface TestFailure {
  source: string;
  filter: string;
  test: string;
  /** Line of the test entry in its document. */
  line: number;
  index: number;
  reason: 'mismatch' | 'not_selected';
  expected: string;
  actual: string;
}

export interface Transcript {
  command?: string;
  output: string;
}

export function splitTranscript(input: string): Transcript {
  const nl = input.indexOf('\n');
  const head = (nl < 0 ? input : input.slice(0, nl)).trim().replace(/^\$\s*/, '');
  const output = nl < 0 ? '' : input.slice(nl + 1);
  return head === '' ? { output } : { command: head, output };
}

const trimEnd = (s: string): string => s.replace(/\n+$/, '');

export function runInlineTest(f: CompiledFilter, t: InlineTest, source: string): TestFailure | undefined {
  const { command, output } = splitTranscript(t.input);
  const base = { source, filter: f.name, test: t.name, line: t.line, index: t.index, expected: t.expected };
  const candidates = selectorCandidates(output, command);
  if (!filterMatches(f, candidates)) {
    return {
      ...base,
      reason: 'not_selected',
      actual: `match ${JSON.stringify(f.match.source)} selects none of ${JSON.stringify(candidates)}`,
    };
  }
  const actual = applyFilter(f, output).output;
  return trimEnd(actual) === trimEnd(t.expected) ? undefined : { ...base, reason: 'mismatch', actual };
}

/** Runs every inline test of a document; returns the failures (empty when all pass). */
export function runInlineTests(doc: ParsedDocument): TestFailure[] {
  const byName = new Map(doc.filters.map((f) => [f.name, f]));
  const out: TestFailure[] = [];
  for (const t of doc.tests) {
    const filter = byName.get(t.filter);
    // parseFilterDocument refuses tests for an unknown filter; a hand-built document may not.
    if (!filter) throw new Error(`${doc.source}: test "${t.name}" names no filter "${t.filter}"`);
    const fail = runInlineTest(filter, t, doc.source);
    if (fail) out.push(fail);
  }
  return out;
}
