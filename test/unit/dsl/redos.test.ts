// Patterns come from tenants, so every one runs on RE2 (linear time). Classic catastrophic-
// backtracking patterns over a 1 MB input complete here; under a backtracking engine each of them
// would run for longer than the age of the universe. No timing is asserted — completing is the test.
import { FilterSet, Pattern, SELECTOR_MAX_CHARS, applyFilter, loadFilterDocument } from '@context-guru/dsl';

const MB = 1 << 20;

describe('linear-time regex engine', () => {
  const doc = `schema_version: 1
filters:
  redos:
    match: '^(a+)+$'
    replace:
      - pattern: '^(a|aa)+$'
        replacement: '[$1]'
    match_output:
      - pattern: '(x+x+)+y'
        message: 'never'
        unless: '(.*a){12}z'
    strip_lines_matching: ['^(\\w+\\s?)*$']
`;
  const f = new FilterSet([loadFilterDocument(doc, 'redos')]).get('redos')!;

  it('selects with ^(a+)+$ on a 1 MB line that almost matches', () => {
    const evil = `${'a'.repeat(MB)}!`;
    expect(f.match.test(evil)).toBe(false);
    // Selection only reads the first SELECTOR_MAX_CHARS of the line (all "a" here), so it is bounded too.
    expect(new FilterSet([loadFilterDocument(doc, 'redos')]).select(evil)?.selector).toHaveLength(SELECTOR_MAX_CHARS);
  });

  it('runs every stage over a 1 MB adversarial input to completion', () => {
    const input = `${'a'.repeat(MB / 2)}\n${'x'.repeat(MB / 2 - 2)}!\n`;
    const r = applyFilter(f, input);
    // ^(a|aa)+$ matches the first line (group 1 is the last repetition, "a"); the x-line is a
    // near-miss for (x+x+)+y and for the strip pattern (the "!" is not a word character).
    expect(r.output.split('\n').map((l) => l.length)).toEqual([3, MB / 2 - 1, 0]);
    expect(r.output.startsWith('[a]\n')).toBe(true);
  });

  it('tests (a|a?)+b and (.*a){12}z against 1 MB without backtracking', () => {
    expect(Pattern.compile('(a|a?)+b').test('a'.repeat(MB))).toBe(false);
    expect(Pattern.compile('(.*a){12}z').test('a'.repeat(MB))).toBe(false);
  });

  it('rejects what RE2 cannot run in linear time: lookaround and backreferences', () => {
    expect(() => Pattern.compile('^(?!.*ERR!).*$')).toThrow(/invalid regex/);
    expect(() => Pattern.compile('(?<=npm )warn')).toThrow(/invalid regex/);
    expect(() => Pattern.compile('(\\w+) \\1')).toThrow(/invalid regex/);
  });
});
