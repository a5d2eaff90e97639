// A filter document: `schema_version: 1`, `filters: {name: {...}}`, optional `tests`. Reading is
// strict — an unknown field, a bad regex, strip together with keep, a missing match, a duplicate
// name or a test for no filter each reject the whole document with the line and field at fault.
import type { CompiledFilter, MatchOutputRule, ReplaceRule } from './filter';
import { type Pattern } from './regex';
import { YamlWalker, type Where } from './yaml-walk';

export interface InlineTest {
  filter: string;
  name: string;
  /** A transcript: first line = the command that ran (may be blank), the rest = what it printed. */
  input: string;
  expected: string;
  /** Line of the test entry in the document, and its index in the filter's test list. */
  line: number;
  index: number;
}

export interface ParsedDocument {
  source: string;
  /** Filters in document order (the set sorts them). */
  filters: CompiledFilter[];
  tests: InlineTest[];
}

export const FILTER_FIELDS = [
  'description',
  'match',
  'family',
  'priority',
  'strip_ansi',
  'replace',
  'match_output',
  'strip_lines_matching',
  'keep_lines_matching',
  'truncate_lines_at',
  'head_lines',
  'tail_lines',
  'max_lines',
  'on_empty',
] as const;

const TOP_FIELDS = ['schema_version', 'filters', 'tests'];
const FAMILY_RE = /^[a-z][a-z0-9_-]{0,31}$/;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Parses and compiles a document. Inline tests are NOT run here (see loadFilterDocument). */
export function parseFilterDocument(text: string, source: string): ParsedDocument {
  const w: YamlWalker = new YamlWalker(text, source);
  if (w.root === null || w.root === undefined) w.fail(null, { line: 1 }, 'empty document (expected schema_version, filters)');
  const top = w.pairs(w.root, {}, 'the document');
  const get = (k: string) => top.find((p) => p.key === k);
  for (const p of top) {
    if (!TOP_FIELDS.includes(p.key)) w.fail(p.pair.key, { field: p.key }, `unknown top-level field (known: ${TOP_FIELDS.join(', ')})`);
  }
  const version = get('schema_version');
  if (!version) w.fail(w.root, { field: 'schema_version', line: 1 }, 'missing (must be 1)');
  if (w.int(version.value, { field: 'schema_version', line: version.line }, 0) !== 1) {
    w.fail(version.value, { field: 'schema_version' }, 'unsupported schema_version (must be 1)');
  }
  const filtersPair = get('filters');
  if (!filtersPair) w.fail(w.root, { field: 'filters', line: 1 }, 'missing (a document defines at least one filter)');
  const filterPairs = w.pairs(filtersPair.value, { field: 'filters', line: filtersPair.line }, 'filters', true);
  if (filterPairs.length === 0) w.fail(filtersPair.value, { field: 'filters', line: filtersPair.line }, 'must define at least one filter');
  const filters = filterPairs.map((p) => readFilter(w, p.key, p.value, p.line));
  const testsPair = get('tests');
  const tests = testsPair ? readTests(w, testsPair.value, testsPair.line, new Set(filters.map((f) => f.name))) : [];
  return { source, filters, tests };
}

type FilterField = (typeof FILTER_FIELDS)[number];
type Draft = Partial<Mutable<CompiledFilter>>;

/** How each field of a filter is read into the draft (its checks fail with the field's line). */
const FIELD_READERS: Record<FilterField, (w: YamlWalker, value: unknown, where: Where, f: Draft) => void> = {
  description: (w, v, at, f) => (f.description = w.str(v, at)),
  match: (w, v, at, f) => (f.match = w.regex(v, at)),
  family: (w, v, at, f) => {
    f.family = w.str(v, at);
    if (!FAMILY_RE.test(f.family)) w.fail(v, at, 'must be a lowercase identifier (e.g. tests, builds, pkg)');
  },
  priority: (w, v, at, f) => (f.priority = w.int(v, at, -1000)),
  strip_ansi: (w, v, at, f) => (f.stripAnsi = w.bool(v, at)),
  replace: (w, v, at, f) => (f.replace = readReplace(w, v, at)),
  match_output: (w, v, at, f) => (f.matchOutput = readMatchOutput(w, v, at)),
  strip_lines_matching: (w, v, at, f) => (f.stripLines = w.regexList(v, at)),
  keep_lines_matching: (w, v, at, f) => (f.keepLines = w.regexList(v, at)),
  truncate_lines_at: (w, v, at, f) => (f.truncateLinesAt = w.int(v, at, 4)),
  head_lines: (w, v, at, f) => (f.headLines = w.int(v, at, 1)),
  tail_lines: (w, v, at, f) => (f.tailLines = w.int(v, at, 1)),
  max_lines: (w, v, at, f) => (f.maxLines = w.int(v, at, 1)),
  on_empty: (w, v, at, f) => (f.onEmpty = w.str(v, at)),
};

const isFilterField = (key: string): key is FilterField => (FILTER_FIELDS as readonly string[]).includes(key);
const EXCLUSIVE = 'strip_lines_matching and keep_lines_matching are exclusive: use one';

function readFilter(w: YamlWalker, name: string, node: unknown, line: number): CompiledFilter {
  if (!NAME_RE.test(name)) w.fail(null, { filter: name, line }, 'filter names are 1-64 letters, digits, "_", "-" or "."');
  const f: Draft = { name, source: w.source, line, description: '', family: 'other', priority: 0 };
  f.stripAnsi = false;
  f.replace = [];
  f.matchOutput = [];
  f.stripLines = [];
  f.keepLines = [];
  let stripLine = 0;
  for (const { key, value, line: at } of w.pairs(node, { filter: name, line }, `filter "${name}"`)) {
    const where: Where = { filter: name, field: key, line: at };
    if (!isFilterField(key)) w.fail(null, where, `unknown field (known: ${FILTER_FIELDS.join(', ')})`);
    FIELD_READERS[key](w, value, where, f);
    if (key === 'strip_lines_matching') stripLine = at;
    if (key === 'keep_lines_matching' && stripLine) w.fail(null, where, EXCLUSIVE);
  }
  if (stripLine && f.keepLines.length > 0) w.fail(null, { filter: name, field: 'strip_lines_matching', line: stripLine }, EXCLUSIVE);
  if (!f.match) w.fail(null, { filter: name, field: 'match', line }, 'missing: every filter needs a match regex (its selector)');
  return f as CompiledFilter;
}

function readReplace(w: YamlWalker, node: unknown, where: Where): ReplaceRule[] {
  return w.items(node, where).map((item, i) => {
    const at: Where = { ...where, field: `${where.field}[${i}]`, line: w.lineOf(item) || where.line };
    let pattern: Pattern | undefined;
    let replacement: string | undefined;
    let replacementLine = at.line;
    for (const { key, value, line } of w.pairs(item, at, `${at.field}`)) {
      const f: Where = { ...at, field: `${at.field}.${key}`, line };
      if (key === 'pattern') pattern = w.regex(value, f);
      else if (key === 'replacement') {
        replacement = value === null ? '' : w.str(value, f);
        replacementLine = line;
      } else w.fail(null, f, 'unknown field (known: pattern, replacement)');
    }
    if (!pattern) return w.fail(null, { ...at, field: `${at.field}.pattern` }, 'missing');
    if (replacement === undefined) return w.fail(null, { ...at, field: `${at.field}.replacement` }, 'missing (use "" to delete the match)');
    const group = highestGroupRef(replacement);
    if (group > pattern.groupCount()) {
      w.fail(
        null,
        { ...at, field: `${at.field}.replacement`, line: replacementLine },
        `refers to $${group} but the pattern has ${pattern.groupCount()} group(s)`,
      );
    }
    return { pattern, replacement };
  });
}

function readMatchOutput(w: YamlWalker, node: unknown, where: Where): MatchOutputRule[] {
  return w.items(node, where).map((item, i) => {
    const at: Where = { ...where, field: `${where.field}[${i}]`, line: w.lineOf(item) || where.line };
    const rule: Partial<MatchOutputRule> = {};
    for (const { key, value, line } of w.pairs(item, at, `${at.field}`)) {
      const f: Where = { ...at, field: `${at.field}.${key}`, line };
      if (key === 'pattern') rule.pattern = w.regex(value, f);
      else if (key === 'message') rule.message = w.str(value, f);
      else if (key === 'unless') rule.unless = w.regex(value, f);
      else w.fail(null, f, 'unknown field (known: pattern, message, unless)');
    }
    if (!rule.pattern) w.fail(null, { ...at, field: `${at.field}.pattern` }, 'missing');
    if (rule.message === undefined) w.fail(null, { ...at, field: `${at.field}.message` }, 'missing');
    return rule as MatchOutputRule;
  });
}

function readTests(w: YamlWalker, node: unknown, line: number, names: Set<string>): InlineTest[] {
  const out: InlineTest[] = [];
  for (const { key: filter, value, line: at } of w.pairs(node, { field: 'tests', line }, 'tests')) {
    if (!names.has(filter)) w.fail(null, { field: `tests.${filter}`, line: at }, `tests for unknown filter "${filter}"`);
    const seen = new Set<string>();
    w.items(value, { filter, field: `tests.${filter}`, line: at }).forEach((item, index) => {
      const testLine = w.lineOf(item) || at;
      const where: Where = { filter, field: `tests.${filter}[${index}]`, line: testLine };
      const given: Partial<Record<'name' | 'input' | 'expected', string>> = {};
      for (const { key, value: v, line: l } of w.pairs(item, where, `${where.field}`)) {
        const f: Where = { ...where, field: `${where.field}.${key}`, line: l };
        if (key === 'name' || key === 'input' || key === 'expected') given[key] = w.str(v, f);
        else w.fail(null, f, 'unknown field (known: name, input, expected)');
      }
      // Evaluated in field order, so the first missing one is the one reported.
      const need = (k: keyof typeof given): string => given[k] ?? w.fail(null, { ...where, field: `${where.field}.${k}` }, 'missing');
      const t: InlineTest = { filter, index, line: testLine, name: need('name'), input: need('input'), expected: need('expected') };
      if (seen.has(t.name)) w.fail(null, where, `duplicate test name "${t.name}"`);
      seen.add(t.name);
      out.push(t);
    });
  }
  return out;
}

/** The highest `$n` group a replacement refers to (String.prototype.replace rules; `$$` is a literal). */
function highestGroupRef(replacement: string): number {
  let max = 0;
  for (let i = 0; i < replacement.length - 1; i++) {
    if (replacement.charAt(i) !== '$') continue;
    const next = replacement.charAt(i + 1);
    if (next === '$') {
      i++;
      continue;
    }
    if (next >= '1' && next <= '9') max = Math.max(max, Number(next));
  }
  return max;
}
