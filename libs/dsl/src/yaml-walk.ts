// Strict reading of a YAML AST with positions: every value is checked for its type where it is
// read, and every complaint carries the line it came from. Aliases are refused (no alias bombs,
// and a filter document has no use for them).
import { LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument, type Pair } from 'yaml';
import { DslError, type DslErrorCode } from './errors';
import { Pattern } from './regex';

/** Bounds the work one filter can ask for per line: list lengths are capped like pattern sizes. */
const MAX_LIST = 256;

export interface Where {
  filter?: string;
  field?: string;
  /** Line to report when the node itself has no position (e.g. an empty value). */
  line?: number;
}

export class YamlWalker {
  private readonly lc = new LineCounter();
  readonly root: unknown;

  constructor(
    text: string,
    readonly source: string,
  ) {
    const doc = parseDocument(text, { lineCounter: this.lc, uniqueKeys: false, prettyErrors: true });
    const err = doc.errors[0];
    if (err) {
      const line = err.linePos?.[0]?.line ?? 0;
      const [headline = ''] = err.message.split('\n'); // split always returns at least one piece
      throw new DslError('invalid_yaml', { source, line }, `invalid YAML: ${headline.replace(/:$/, '')}`);
    }
    this.root = doc.contents;
  }

  lineOf(node: unknown): number {
    const range = (node as { range?: [number, number, number] } | null)?.range;
    return range ? this.lc.linePos(range[0]).line : 0;
  }

  /** Schema problems are `invalid_document` unless the caller names a more precise code. */
  fail(node: unknown, where: Where, detail: string, code: DslErrorCode = 'invalid_document'): never {
    const line = this.lineOf(node) || where.line || 0;
    throw new DslError(code, { source: this.source, line, filter: where.filter, field: where.field }, detail);
  }

  /** The pairs of a mapping, with their keys read as strings; duplicate keys are refused. */
  pairs(
    node: unknown,
    where: Where,
    what: string,
    keysAreFilters = false,
  ): Array<{ key: string; pair: Pair; value: unknown; line: number }> {
    if (isAlias(node)) this.fail(node, where, 'YAML aliases are not supported');
    if (!isMap(node)) this.fail(node, where, `${what} must be a mapping`);
    const seen = new Set<string>();
    return node.items.map((pair) => {
      const k = pair.key;
      if (!isScalar(k) || typeof k.value !== 'string') this.fail(k, where, `${what}: keys must be strings`);
      const key = k.value;
      if (seen.has(key)) {
        if (keysAreFilters)
          this.fail(k, { filter: key, field: 'filters' }, 'duplicate filter name (defined twice in this document)', 'duplicate_filter');
        this.fail(k, where, `${what}: key "${key}" given twice`);
      }
      seen.add(key);
      return { key, pair, value: pair.value, line: this.lineOf(k) };
    });
  }

  items(node: unknown, where: Where, max = MAX_LIST): unknown[] {
    if (isAlias(node)) this.fail(node, where, 'YAML aliases are not supported');
    if (!isSeq(node)) this.fail(node, where, 'must be a list');
    if (node.items.length > max) this.fail(node, where, `lists at most ${max} entries (got ${node.items.length})`);
    return node.items;
  }

  private scalar(node: unknown, where: Where): unknown {
    if (isAlias(node)) this.fail(node, where, 'YAML aliases are not supported');
    if (node === null || node === undefined) return null;
    if (!isScalar(node)) this.fail(node, where, 'must be a single value, not a mapping or a list');
    return node.value;
  }

  str(node: unknown, where: Where): string {
    const v = this.scalar(node, where);
    if (typeof v !== 'string') this.fail(node, where, `must be a string (got ${describe(v)})`);
    return v;
  }

  int(node: unknown, where: Where, min: number): number {
    const v = this.scalar(node, where);
    if (typeof v !== 'number' || !Number.isInteger(v)) this.fail(node, where, `must be an integer (got ${describe(v)})`);
    if (v < min) this.fail(node, where, `must be at least ${min} (got ${v})`);
    return v;
  }

  bool(node: unknown, where: Where): boolean {
    const v = this.scalar(node, where);
    if (typeof v !== 'boolean') this.fail(node, where, `must be true or false (got ${describe(v)})`);
    return v;
  }

  regex(node: unknown, where: Where): Pattern {
    const src = this.str(node, where);
    if (src === '') this.fail(node, where, 'must be a non-empty regex', 'invalid_regex');
    try {
      return Pattern.compile(src);
    } catch (err) {
      return this.fail(node, where, (err as Error).message, 'invalid_regex');
    }
  }

  regexList(node: unknown, where: Where): Pattern[] {
    const items = this.items(node, where);
    if (items.length === 0) this.fail(node, where, 'must list at least one pattern');
    return items.map((item, i) => this.regex(item, { ...where, field: `${where.field ?? ''}[${i}]` }));
  }
}

function describe(v: unknown): string {
  if (v === null) return 'nothing';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}
