// The shipped filters: each loads strictly with its own inline tests, routes its own test inputs
// to itself, and — over EVERY builtin's test inputs, through EVERY builtin filter — never drops an
// error line, an exit code or a failing test name, and never claims success when one is present.
import { basename } from 'node:path';
import {
  applyFilter,
  builtinDocuments,
  builtinFiles,
  builtinFilterSet,
  splitTranscript,
  stripAnsi,
  type CompiledFilter,
} from '@context-guru/dsl';

const REQUIRED = [
  'pytest',
  'npm-install',
  'make',
  'jest',
  'vitest',
  'tsc',
  'eslint',
  'cargo-build',
  'cargo-test',
  'go-test',
  'pip-install',
  'docker-build',
  'terraform-plan',
  'git-status',
  'git-log',
  'git-diff',
];

/** Lines that carry failure signal: errors, exit codes, failing tests. */
const SIGNAL =
  /\berr(or|ors)?\b|ERR!|\bfail(ed|ure|ures|s)?\b|\bpanic(ked|s)?\b|traceback|exception|exit (code|status)|\bError \d+\b|✕|×|●|\*\*\*|--- FAIL/i;
/** A passing test whose NAME happens to contain an error word is not failure signal. */
const PASSING = /^\s*✓ |\bPASSED\b|\.\.\. ok$|^\s*--- PASS: |^PASS /;
/** tsc's trailing per-file table header: the "Found N errors" line above it carries the count. */
const NOT_SIGNAL = /^Errors\s+Files$/;
/** "0 failed", "0 errors": a count of nothing is not a failure. */
const ZERO_COUNTS = /\b0 (failed|errors?)\b/g;

const norm = (line: string): string => stripAnsi(line).replace(/\s+/g, ' ').trim();

function signalLines(output: string): string[] {
  return output
    .split('\n')
    .map(norm)
    .filter((l) => SIGNAL.test(l.replace(ZERO_COUNTS, '')) && !PASSING.test(l) && !NOT_SIGNAL.test(l));
}

const filters = builtinFilterSet().filters;
const inputs = builtinDocuments().flatMap((d) => d.tests.map((t) => ({ id: `${t.filter}/${t.name}`, ...splitTranscript(t.input) })));
const successMessages = (f: CompiledFilter): string[] => [
  ...f.matchOutput.map((r) => r.message),
  ...(f.onEmpty !== undefined ? [f.onEmpty] : []),
];

describe('builtin filters', () => {
  it('ships every required filter, one per file, named after its file', () => {
    const names = builtinFiles().map((p) => basename(p, '.yaml'));
    for (const n of REQUIRED) expect(names).toContain(n);
    for (const d of builtinDocuments()) {
      expect(d.filters).toHaveLength(1);
      expect(d.source).toBe(`builtin:${d.filters[0]!.name}.yaml`);
    }
  });

  it('gives every filter a family, a description and at least two inline tests', () => {
    for (const d of builtinDocuments()) {
      const f = d.filters[0]!;
      expect([f.name, f.family]).not.toEqual([f.name, 'other']);
      expect(f.description.length).toBeGreaterThan(10);
      expect(d.tests.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('guards every match_output with an unless', () => {
    for (const f of filters) for (const rule of f.matchOutput) expect([f.name, rule.unless?.source]).not.toEqual([f.name, undefined]);
  });

  it('routes every inline test input to its own filter within the full builtin set', () => {
    for (const d of builtinDocuments()) {
      for (const t of d.tests) {
        const { command, output } = splitTranscript(t.input);
        expect([t.name, builtinFilterSet().select(output, command)?.filter.name]).toEqual([t.name, t.filter]);
      }
    }
  });

  it('has no catch-all strip pattern: ordinary content lines are never stripped', () => {
    const ordinary = ['some text', 'x', '  indented detail', 'Result: 42', 'see docs/README.md'];
    for (const f of filters) {
      for (const p of f.stripLines)
        for (const line of ordinary) expect([f.name, p.source, line, p.test(line)]).toEqual([f.name, p.source, line, false]);
    }
  });

  it('the test inputs carry plenty of failure signal to check against', () => {
    const withSignal = inputs.filter((i) => signalLines(i.output).length > 0);
    expect(withSignal.length).toBeGreaterThanOrEqual(25);
  });

  describe('error lines, exit codes and failing test names survive every builtin filter', () => {
    for (const f of filters) {
      it(`${f.name} over every builtin input`, () => {
        for (const input of inputs) {
          const want = signalLines(input.output);
          if (want.length === 0) continue;
          const out = applyFilter(f, input.output).output;
          const kept = new Set(out.split('\n').map(norm));
          const lost = want.filter((l) => !kept.has(l));
          expect({ input: input.id, lost }).toEqual({ input: input.id, lost: [] });
          // No success summary while failure signal is present.
          expect({ input: input.id, success: successMessages(f).includes(out) }).toEqual({ input: input.id, success: false });
        }
      });
    }
  });

  describe('git filters never drop a changed file or a diff line', () => {
    const DIFF_LINE = /^([-+ @]|diff --git |new file mode|deleted file mode|similarity index|rename (from|to) )/;
    const STATUS_PATH = /^\t/;
    for (const name of ['git-status', 'git-log', 'git-diff']) {
      it(name, () => {
        const f = builtinFilterSet().get(name)!;
        for (const input of inputs.filter((i) => i.id.startsWith('git-'))) {
          const out = new Set(applyFilter(f, input.output).output.split('\n'));
          const lines = input.output.split('\n');
          const firstDiff = lines.findIndex((l) => l.startsWith('diff --git '));
          const must = lines.filter((l, i) => l !== '' && ((firstDiff >= 0 && i >= firstDiff && DIFF_LINE.test(l)) || STATUS_PATH.test(l)));
          expect({ input: input.id, lost: must.filter((l) => !out.has(l)) }).toEqual({ input: input.id, lost: [] });
        }
      });
    }
  });
});
