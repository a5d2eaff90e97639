// Loading is all-or-nothing: a document whose structure is wrong, or any of whose inline tests
// fails, never contributes a filter — a filter that fails its own tests would mangle output.
import { type ParsedDocument, parseFilterDocument } from './document';
import { DslError } from './errors';
import { type TestFailure, runInlineTests } from './inline-tests';

const clip = (s: string): string => (s.length > 400 ? `${s.slice(0, 400)}…` : s);

export function describeFailure(f: TestFailure): string {
  return f.reason === 'not_selected'
    ? `inline test "${f.test}" does not select this filter: ${f.actual}`
    : `inline test "${f.test}" failed: expected ${JSON.stringify(clip(f.expected))}, got ${JSON.stringify(clip(f.actual))}`;
}

export function failureError(f: TestFailure): DslError {
  return new DslError(
    'inline_test_failed',
    { source: f.source, line: f.line, filter: f.filter, field: `tests.${f.filter}[${f.index}]` },
    describeFailure(f),
  );
}

/** Parses, compiles and tests a document; throws a DslError on the first problem. */
export function loadFilterDocument(text: string, source: string): ParsedDocument {
  const doc = parseFilterDocument(text, source);
  const failures = runInlineTests(doc);
  const [first] = failures;
  if (first) throw failureError(first);
  return doc;
}

/** Either the document (and its failing tests) or the structural problem that stopped it. */
export type DocumentCheck =
  | { source: string; doc: ParsedDocument; error?: undefined; failures: TestFailure[] }
  /** A structural problem: the document did not parse or compile (no tests were run). */
  | { source: string; doc?: undefined; error: DslError; failures: TestFailure[] };

/** Like loadFilterDocument but collects every failing test instead of stopping at the first. */
export function checkFilterDocument(text: string, source: string): DocumentCheck {
  try {
    const doc = parseFilterDocument(text, source);
    return { source, doc, failures: runInlineTests(doc) };
  } catch (err) {
    if (err instanceof DslError) return { source, error: err, failures: [] };
    throw err;
  }
}
