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

export class DslError extends Error {
  readonly source: string;
  readonly line: number;
  readonly filter?: string;
  readonly field?: string;

  constructor(
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
