// The only regular expressions a sandboxed program can run: RE2 (re2js), linear in the input, so a
// model-written pattern can never stall the worker the way a backtracking engine can. Strings in,
// strings (or JSON text of arrays) out — no host object ever reaches the program.
import { RE2JS } from 're2js';

/** Bounds the constant factor of linear-time matching (same order as the DSL's cap). */
const MAX_PROGRAM_SIZE = 2000;
const MAX_PATTERN_CHARS = 2000;

export type RegexOp = 'sub' | 'findall' | 'split' | 'match';

/** Per-run cache: a program usually applies a handful of patterns to many lines. */
export class RegexHelpers {
  private readonly compiled = new Map<string, RE2JS>();

  constructor(private readonly deadline: number) {}

  private compile(pattern: string): RE2JS {
    let re = this.compiled.get(pattern);
    if (re) return re;
    if (pattern.length > MAX_PATTERN_CHARS) throw new Error('regex pattern too long');
    try {
      // ^ and $ match at line boundaries: filters think in lines.
      re = RE2JS.compile(pattern, RE2JS.MULTILINE);
    } catch (err) {
      throw new Error(`invalid RE2 pattern ${JSON.stringify(pattern)}: ${(err as Error).message}`, { cause: err });
    }
    if (re.programSize() > MAX_PROGRAM_SIZE) throw new Error(`regex ${JSON.stringify(pattern)} is too complex`);
    this.compiled.set(pattern, re);
    return re;
  }

  /** Runs one helper; the result is a string (sub) or JSON text (the rest). */
  run(op: RegexOp, pattern: string, text: string, replacement: string): string {
    if (Date.now() > this.deadline) throw new Error('interrupted');
    const re = this.compile(pattern);
    switch (op) {
      case 'sub':
        return re.test(text) ? re.matcher(text).replaceAll(replacement) : text;
      case 'findall':
        return JSON.stringify(findall(re, text));
      case 'split':
        return JSON.stringify(re.split(text, -1));
      case 'match': {
        const m = re.exec(text);
        return JSON.stringify(m ? [...m].map((g) => g ?? null) : null);
      }
    }
  }
}

/** Python semantics: whole matches without groups, group 1 with one group, group lists beyond. */
function findall(re: RE2JS, text: string): Array<string | Array<string | null> | null> {
  const groups = re.groupCount();
  const out: Array<string | Array<string | null> | null> = [];
  for (const m of re.matchAll(text)) {
    if (groups === 0) out.push(m[0]);
    else if (groups === 1) out.push(m[1] ?? null);
    else out.push([...m].slice(1).map((g) => g ?? null));
  }
  return out;
}

export function isRegexOp(op: string): op is RegexOp {
  return op === 'sub' || op === 'findall' || op === 'split' || op === 'match';
}
