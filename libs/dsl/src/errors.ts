// Every load-time problem in a filter document is a DslError that names where it is — the document,
// the line, the filter and the field — so an author can fix the YAML without reading this code.
export interface DslErrorLocation {
  /** Where the document came from: a file path, `builtin:<file>`, or `filters[i]` for inline docs. */
  source: string;
  /** 1-based line in the YAML text; 0 when the problem is not tied to a line. */
  line: number;
  filter?: string;
  /** Field path inside the filter (or the document), e.g. `strip_lines_matching[1]`, `tests.pytest[0]`. */
  field?: string;
}

/** The one table of DSL error codes; docs/errors.md lists the same codes (an anti-drift test reads both). */
export const DSL_ERRORS = {
  invalid_yaml: { meaning: 'the document is not YAML (the message gives the line)' },
  invalid_document: {
    meaning:
      'the YAML does not match the schema: an unknown or missing field, a wrong type, a bad name, exclusive fields together, a YAML alias',
  },
  invalid_regex: { meaning: 'a pattern that is empty, not valid RE2 syntax, or too complex for the linear-time engine' },
  duplicate_filter: { meaning: 'one filter name defined twice, in one document or across the documents of a set' },
  inline_test_failed: { meaning: "a filter's inline test does not produce its `expected` output (the message shows the first difference)" },
} as const;

export type DslErrorCode = keyof typeof DSL_ERRORS;

export class DslError extends Error {
  readonly source: string;
  readonly line: number;
  readonly filter?: string;
  readonly field?: string;

  constructor(
    readonly code: DslErrorCode,
    where: DslErrorLocation,
    readonly detail: string,
  ) {
    super(formatLocation(where) + detail);
    this.name = 'DslError';
    this.source = where.source;
    this.line = where.line;
    this.filter = where.filter;
    this.field = where.field;
  }
}

function formatLocation(w: DslErrorLocation): string {
  const at = w.line > 0 ? `${w.source}:${w.line}` : w.source;
  const parts = [at];
  if (w.filter !== undefined) parts.push(`filter "${w.filter}"`);
  if (w.field !== undefined) parts.push(`field "${w.field}"`);
  return `${parts.join(': ')}: `;
}
