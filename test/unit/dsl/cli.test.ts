// `context-guru-dsl verify <file...>`: strict load, inline tests, every failure printed as
// expected-vs-actual, non-zero exit status on any failure.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinFiles, runCli } from '@context-guru/dsl';

const dir = mkdtempSync(join(tmpdir(), 'cg-dsl-cli-'));
const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

function run(...args: string[]): { code: number; out: string } {
  const lines: string[] = [];
  const code = runCli(args, (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

const GOOD = file(
  'good.yaml',
  `schema_version: 1
filters:
  make:
    match: '^\\$ make'
    strip_lines_matching: ["^make\\\\[\\\\d+\\\\]: (Entering|Leaving) directory"]
    on_empty: "make: ok"
tests:
  make:
    - name: quiet
      input: "$ make\\nmake[1]: Entering directory '/a'\\nmake[1]: Leaving directory '/a'\\n"
      expected: "make: ok"
`,
);

const FAILING = file(
  'failing.yaml',
  `schema_version: 1
filters:
  make:
    match: '^\\$ make'
    strip_lines_matching: ["^make"]
tests:
  make:
    - name: keeps the error
      input: "$ make\\nmake: *** [Makefile:3: all] Error 2\\n"
      expected: "make: *** [Makefile:3: all] Error 2"
    - name: drops entering
      input: "$ make\\nmake[1]: Entering directory '/a'\\ncc -c a.c\\n"
      expected: "cc -c a.c"
    - name: second failure
      input: "$ make\\nmake: Nothing to be done for 'all'.\\n"
      expected: "make: Nothing to be done for 'all'."
`,
);

describe('context-guru-dsl verify', () => {
  it('exits 0 and summarises when every test passes', () => {
    expect(run('verify', GOOD)).toEqual({ code: 0, out: 'ok: 1 document(s), 1 filter(s), 1 test(s), 0 problem(s)' });
  });

  it('prints every failing test as expected vs actual and exits 1', () => {
    const { code, out } = run('verify', FAILING);
    expect(code).toBe(1);
    expect(out).toBe(
      [
        `FAIL ${FAILING}:8: filter "make" test "keeps the error"`,
        '  expected:',
        '    make: *** [Makefile:3: all] Error 2',
        '  actual:',
        '    (empty)',
        `FAIL ${FAILING}:14: filter "make" test "second failure"`,
        '  expected:',
        "    make: Nothing to be done for 'all'.",
        '  actual:',
        '    (empty)',
        'FAILED: 1 document(s), 1 filter(s), 3 test(s), 2 problem(s)',
      ].join('\n'),
    );
  });

  it('reports a structural error with file and line, and still checks the other files', () => {
    const bad = file('bad.yaml', 'schema_version: 1\nfilters:\n  x:\n    mtach: x\n');
    const { code, out } = run('verify', bad, GOOD);
    expect(code).toBe(1);
    expect(out.split('\n')[0]).toBe(
      `ERROR ${bad}:4: filter "x": field "mtach": unknown field (known: description, match, family, priority, strip_ansi, replace, match_output, strip_lines_matching, keep_lines_matching, truncate_lines_at, head_lines, tail_lines, max_lines, on_empty)`,
    );
    expect(out.split('\n').pop()).toBe('FAILED: 2 document(s), 1 filter(s), 1 test(s), 1 problem(s)');
  });

  it('rejects the same filter name across files', () => {
    const { code, out } = run('verify', GOOD, file('dup.yaml', "schema_version: 1\nfilters:\n  make:\n    match: 'x'\n"));
    expect(code).toBe(1);
    expect(out).toContain(`filter "make": field "filters": duplicate filter name (already defined at ${GOOD}:3)`);
  });

  it('verifies the shipped builtins', () => {
    const { code, out } = run('verify', '--builtins');
    expect(code).toBe(0);
    expect(out).toMatch(
      new RegExp(
        `^ok: ${builtinFiles().length} document\\(s\\), ${builtinFiles().length} filter\\(s\\), \\d+ test\\(s\\), 0 problem\\(s\\)$`,
      ),
    );
  });

  it('exits 1 for an unreadable file and 2 on bad usage', () => {
    expect(run('verify', join(dir, 'missing.yaml')).code).toBe(1);
    expect(run('verify').code).toBe(2);
    expect(run('check', GOOD).code).toBe(2);
  });
});
