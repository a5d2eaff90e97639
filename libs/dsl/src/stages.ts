// The fixed 8-stage pipeline, in the documented order (docs/dsl.md): strip_ansi → replace → match_output → strip/keep
// lines → truncate_lines_at → head/tail → max_lines → on_empty. Each stage raises the lossiness at
// most as far as what it actually did, so the hint the offloader appends never over- or under-claims.
import { type CompiledFilter, type FilterResult, type Lossiness } from './filter';
import { Pattern, stripAnsi } from './regex';

/** A working line: its text and the index of the input line it came from (-1 for inserted lines). */
interface Lines {
  text: string[];
  src: number[];
}

const isBlank = (l: string): boolean => l.trim() === '';
const squash = (l: string): string => l.replace(/\s+/g, '');

/** Strip/keep lists compiled once into one alternation (filters are immutable, so cache by list). */
const unions = new WeakMap<readonly Pattern[], Pattern>();
function anyOf(list: readonly Pattern[]): Pattern {
  let u = unions.get(list);
  if (!u) {
    u = Pattern.union(list);
    unions.set(list, u);
  }
  return u;
}

/** What one stage hands the next: the working lines, the loss so far, and the input lines a clean tail cut kept. */
interface Work {
  lines: Lines;
  loss: Lossiness;
  keptLines: number;
}

export function applyFilter(f: CompiledFilter, input: string): FilterResult {
  const trailingNewline = input.endsWith('\n');
  const text = (trailingNewline ? input.slice(0, -1) : input).split('\n');
  const w: Work = { lines: { text, src: text.map((_, i) => i) }, loss: 'none', keptLines: 0 };

  // 1. strip_ansi: colour codes carry nothing a model reads.
  if (f.stripAnsi) w.lines.text = w.lines.text.map((l) => stripAnsi(l));
  if (f.replace.length > 0) replaceInLines(f.replace, w);
  const collapsed = matchOutput(f.matchOutput, w.lines.text);
  if (collapsed !== undefined) return { output: collapsed, loss: 'whole', keptLines: 0 };
  if (f.stripLines.length > 0 || f.keepLines.length > 0) stripOrKeepLines(f, w);
  if (f.truncateLinesAt !== undefined) truncateLines(f.truncateLinesAt, w);
  windowLines(f.headLines, f.tailLines, w);
  if (f.maxLines !== undefined && w.lines.text.length > f.maxLines) capLines(f.maxLines, w);

  // 8. on_empty: a blank result is replaced by the filter's message (all it dropped was noise).
  const out = w.lines.text.length > 0 ? w.lines.text.join('\n') + (trailingNewline ? '\n' : '') : '';
  const keptLines = w.loss === 'tail' ? w.keptLines : 0;
  if (f.onEmpty !== undefined && isBlank(out)) return { output: f.onEmpty, loss: w.loss, keptLines };
  return { output: out, loss: w.loss, keptLines };
}

/**
 * 2. replace: chained per line. An edit that only moves whitespace is a reformat; any other edit
 * changed what the line says, so the original is the only full record.
 */
function replaceInLines(rules: CompiledFilter['replace'], w: Work): void {
  w.lines.text = w.lines.text.map((l) => {
    let out = l;
    for (const r of rules) out = r.pattern.replaceAll(out, r.replacement);
    if (out !== l && squash(out) !== squash(l)) w.loss = 'whole';
    return out;
  });
}

/** 3. match_output: the whole blob collapses to a rule's message, unless its guard sees something. */
function matchOutput(rules: CompiledFilter['matchOutput'], text: string[]): string | undefined {
  if (rules.length === 0) return undefined;
  const blob = text.join('\n');
  return rules.find((rule) => rule.pattern.test(blob) && !(rule.unless?.test(blob) ?? false))?.message;
}

/**
 * 4. strip or keep lines. Dropping blank lines is a reformat; dropping any other line is loss
 * (upstream recorded none here, which left the model without a recovery hint).
 */
function stripOrKeepLines(f: CompiledFilter, w: Work): void {
  const keep = f.keepLines.length > 0;
  const rule = anyOf(keep ? f.keepLines : f.stripLines);
  const next: Lines = { text: [], src: [] };
  w.lines.text.forEach((l, i) => {
    if (rule.test(l) === keep) {
      next.text.push(l);
      next.src.push(w.lines.src[i] ?? -1);
    } else if (!isBlank(l)) {
      w.loss = 'whole';
    }
  });
  w.lines = next;
}

/** 5. truncate_lines_at: every long line loses its own end, so the loss is never one clean tail. */
function truncateLines(cap: number, w: Work): void {
  w.lines.text = w.lines.text.map((l) => {
    if (l.length <= cap) return l;
    const points = [...l];
    if (points.length <= cap) return l;
    w.loss = 'whole';
    return `${points.slice(0, cap - 3).join('')}...`;
  });
}

/** 6. head / tail windows. Only a head alone is a clean tail cut. */
function windowLines(head: number | undefined, tail: number | undefined, w: Work): void {
  const total = w.lines.text.length;
  if (head !== undefined && tail !== undefined) {
    if (total <= head + tail) return;
    w.lines = splice(w.lines, head, total - tail, `... (${total - head - tail} lines omitted)`);
    w.loss = 'whole';
  } else if (head !== undefined) {
    if (total <= head) return;
    w.keptLines = lastSource(w.lines, head);
    w.lines = splice(w.lines, head, total, `... (${total - head} lines omitted)`);
    w.loss = w.loss === 'none' ? 'tail' : 'whole';
  } else if (tail !== undefined) {
    if (total <= tail) return;
    w.lines = splice(w.lines, 0, total - tail, `... (${total - tail} lines omitted)`);
    w.loss = 'whole';
  }
}

/** 7. max_lines: an absolute cap. A clean tail cut only when nothing was lost before it. */
function capLines(max: number, w: Work): void {
  const n = w.lines.text.length;
  if (w.loss === 'none') {
    w.keptLines = lastSource(w.lines, max);
    w.loss = 'tail';
  } else {
    w.loss = 'whole';
  }
  w.lines = splice(w.lines, max, n, `... (${n - max} lines truncated)`);
}

/** Replaces lines [from, to) with one inserted note line. */
function splice(lines: Lines, from: number, to: number, note: string): Lines {
  return {
    text: [...lines.text.slice(0, from), note, ...lines.text.slice(to)],
    src: [...lines.src.slice(0, from), -1, ...lines.src.slice(to)],
  };
}

/** Number of input lines covered by the first `count` working lines (through the last real one). */
function lastSource(lines: Lines, count: number): number {
  for (const src of lines.src.slice(0, count).reverse()) if (src >= 0) return src + 1;
  return 0;
}
