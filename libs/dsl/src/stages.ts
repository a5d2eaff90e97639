// The fixed 8-stage pipeline, in the seed's order: strip_ansi → replace → match_output → strip/keep
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

export function applyFilter(f: CompiledFilter, input: string): FilterResult {
  const trailingNewline = input.endsWith('\n');
  const body = trailingNewline ? input.slice(0, -1) : input;
  const text = body.split('\n');
  let lines: Lines = { text, src: text.map((_, i) => i) };
  let loss: Lossiness = 'none';
  let keptLines = 0;

  // 1. strip_ansi: colour codes carry nothing a model reads.
  if (f.stripAnsi) for (let i = 0; i < lines.text.length; i++) lines.text[i] = stripAnsi(lines.text[i]!);

  // 2. replace: chained per line. An edit that only moves whitespace is a reformat; any other
  // edit changed what the line says, so the original is the only full record.
  if (f.replace.length > 0) {
    for (let i = 0; i < lines.text.length; i++) {
      const l = lines.text[i]!;
      let out = l;
      for (const r of f.replace) out = r.pattern.replaceAll(out, r.replacement);
      if (out !== l && squash(out) !== squash(l)) loss = 'whole';
      lines.text[i] = out;
    }
  }

  // 3. match_output: the whole blob collapses to a message, unless the guard sees something.
  if (f.matchOutput.length > 0) {
    const blob = lines.text.join('\n');
    for (const rule of f.matchOutput) {
      if (rule.pattern.test(blob) && !(rule.unless?.test(blob) ?? false)) {
        return { output: rule.message, loss: 'whole', keptLines: 0 };
      }
    }
  }

  // 4. strip or keep lines. Dropping blank lines is a reformat; dropping any other line is loss
  // (upstream recorded none here, which left the model without a recovery hint).
  if (f.stripLines.length > 0 || f.keepLines.length > 0) {
    const keep = f.keepLines.length > 0;
    const rule = anyOf(keep ? f.keepLines : f.stripLines);
    const next: Lines = { text: [], src: [] };
    for (let i = 0; i < lines.text.length; i++) {
      const l = lines.text[i]!;
      if (rule.test(l) === keep) {
        next.text.push(l);
        next.src.push(lines.src[i]!);
      } else if (!isBlank(l)) {
        loss = 'whole';
      }
    }
    lines = next;
  }

  // 5. truncate_lines_at: every long line loses its own end, so the loss is never one clean tail.
  const cap = f.truncateLinesAt;
  if (cap !== undefined) {
    for (let i = 0; i < lines.text.length; i++) {
      const l = lines.text[i]!;
      if (l.length <= cap) continue;
      const points = [...l];
      if (points.length <= cap) continue;
      lines.text[i] = `${points.slice(0, cap - 3).join('')}...`;
      loss = 'whole';
    }
  }

  // 6. head / tail windows.
  const head = f.headLines;
  const tail = f.tailLines;
  const total = lines.text.length;
  if (head !== undefined && tail !== undefined) {
    if (total > head + tail) {
      lines = splice(lines, head, total - tail, `... (${total - head - tail} lines omitted)`);
      loss = 'whole';
    }
  } else if (head !== undefined) {
    if (total > head) {
      keptLines = lastSource(lines, head);
      lines = splice(lines, head, total, `... (${total - head} lines omitted)`);
      loss = loss === 'none' ? 'tail' : 'whole';
    }
  } else if (tail !== undefined) {
    if (total > tail) {
      lines = splice(lines, 0, total - tail, `... (${total - tail} lines omitted)`);
      loss = 'whole';
    }
  }

  // 7. max_lines: an absolute cap. A clean tail cut only when nothing was lost before it.
  const max = f.maxLines;
  if (max !== undefined && lines.text.length > max) {
    const n = lines.text.length;
    if (loss === 'none') {
      keptLines = lastSource(lines, max);
      loss = 'tail';
    } else {
      loss = 'whole';
    }
    lines = splice(lines, max, n, `... (${n - max} lines truncated)`);
  }

  // 8. on_empty: a blank result is replaced by the filter's message (all it dropped was noise).
  const out = lines.text.length > 0 ? lines.text.join('\n') + (trailingNewline ? '\n' : '') : '';
  if (f.onEmpty !== undefined && isBlank(out)) return { output: f.onEmpty, loss, keptLines: loss === 'tail' ? keptLines : 0 };
  return { output: out, loss, keptLines: loss === 'tail' ? keptLines : 0 };
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
  for (let i = Math.min(count, lines.src.length) - 1; i >= 0; i--) {
    if (lines.src[i]! >= 0) return lines.src[i]! + 1;
  }
  return 0;
}
