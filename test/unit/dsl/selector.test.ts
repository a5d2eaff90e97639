// Selection: a filter's match sees the output's first non-empty line and, when known, the command
// as `$ <command>`; filters are tried by priority (high first), then name; first match wins.
import {
  FilterSet,
  SELECTOR_MAX_CHARS,
  commandLine,
  firstLine,
  loadFilterDocument,
  outputSelector,
  selectorCandidates,
} from '@context-guru/dsl';

const set = new FilterSet([
  loadFilterDocument(
    `schema_version: 1
filters:
  b-generic:
    match: 'error'
  a-generic:
    match: 'error'
  specific:
    priority: 10
    match: '^error\\[E\\d+\\]'
  by-command:
    match: '^\\$ make\\b'
  output-shape:
    match: '^make(\\[\\d+\\])?: '
`,
    'sel',
  ),
]);

describe('selector', () => {
  it('is the first non-empty line, ANSI-free and trimmed', () => {
    expect(firstLine('\n  \n\x1b[31m  error: boom \x1b[0m\nnext')).toBe('error: boom');
    expect(firstLine('\n \n')).toBe('');
  });

  it('writes the command as `$ <first line>`, cut at 200 code points', () => {
    expect(commandLine('make -j4\n# second line')).toBe('$ make -j4');
    expect(commandLine('$ make')).toBe('$ make');
    expect(commandLine('   ')).toBeUndefined();
    expect(commandLine(`echo ${'é'.repeat(300)}`)).toBe(`$ echo ${'é'.repeat(195)}`);
  });

  it('looks past an npm / yarn script banner and adds the script command', () => {
    const npm = '\n> shop@1.0.0 test\n> jest --ci\n\nFAIL src/a.test.ts\n';
    expect(outputSelector(npm)).toEqual({ line: 'FAIL src/a.test.ts', script: 'jest --ci' });
    expect(selectorCandidates(npm, 'npm test')).toEqual(['FAIL src/a.test.ts', '$ jest --ci', '$ npm test']);
    expect(outputSelector('yarn run v1.22.19\n$ vitest run\n RUN  v2.1.8 /app\n')).toEqual({
      line: 'RUN  v2.1.8 /app',
      script: 'vitest run',
    });
  });

  it('bounds a huge first line', () => {
    expect(firstLine('x'.repeat(SELECTOR_MAX_CHARS * 3))).toHaveLength(SELECTOR_MAX_CHARS);
  });
});

describe('filter order', () => {
  it('sorts by priority descending, then name', () => {
    expect(set.filters.map((f) => f.name)).toEqual(['specific', 'a-generic', 'b-generic', 'by-command', 'output-shape']);
  });

  it('first match wins: priority before name', () => {
    expect(set.select('error[E0308]: mismatched types\n')?.filter.name).toBe('specific');
    expect(set.select('error: linker failed\n')?.filter.name).toBe('a-generic');
  });

  it('matches on the command when the output line does not match', () => {
    expect(set.select('gcc -c a.c\n', 'make all')?.filter.name).toBe('by-command');
    expect(set.select('gcc -c a.c\n')).toBeUndefined();
    expect(set.select("make[1]: Entering directory '/x'\n")?.filter.name).toBe('output-shape');
  });

  it('an output-shape pattern never mistakes the command for output', () => {
    // `^make…: ` cannot match "$ make": the command carries its `$ ` prefix.
    expect(set.select('cc -c a.c\n', 'make: all')?.filter.name).toBe('by-command');
  });

  it('reports the output selector, not the command', () => {
    expect(set.select('\n\nerror: x\n', 'cargo build')?.selector).toBe('error: x');
  });
});
