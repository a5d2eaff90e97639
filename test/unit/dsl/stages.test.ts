// Every stage of the 8-stage pipeline, driven by fixture files: test/fixtures/dsl/stages/*.yaml,
// each a filter document plus cases with the expected output, lossiness and kept line count.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { FilterSet, applyFilter, loadFilterDocument, type Lossiness } from '@context-guru/dsl';

const DIR = join(__dirname, '..', '..', 'fixtures', 'dsl', 'stages');

interface StageCase {
  name: string;
  filter: string;
  input: string;
  expected: string;
  loss: Lossiness;
  kept_lines?: number;
}

const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

describe('the 8 stages', () => {
  it('has a fixture file for each of the 8 stages', () => {
    expect(files.map((f) => f.split('-')[0])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
  });

  for (const file of files) {
    describe(file, () => {
      const fixture = parse(readFileSync(join(DIR, file), 'utf8')) as { document: string; cases: StageCase[] };
      const set = new FilterSet([loadFilterDocument(fixture.document, file)]);
      for (const c of fixture.cases) {
        it(c.name, () => {
          const f = set.get(c.filter);
          expect(f).toBeDefined();
          const r = applyFilter(f!, c.input);
          expect(r.output).toBe(c.expected);
          expect(r.loss).toBe(c.loss);
          expect(r.keptLines).toBe(c.kept_lines ?? 0);
        });
      }
    });
  }
});

describe('stage order', () => {
  const doc = `schema_version: 1
filters:
  ordered:
    match: 'x'
    strip_ansi: true
    replace: [{pattern: '^PASS(ED)? ', replacement: 'ok '}]
    strip_lines_matching: ['^ok ']
    truncate_lines_at: 10
    max_lines: 1
`;
  it('runs strip_ansi before replace before strip before truncate before max_lines', () => {
    const f = new FilterSet([loadFilterDocument(doc, 'order')]).get('ordered')!;
    // The colour code would hide "PASSED" from replace if strip_ansi ran later; replace must run
    // before strip for "ok " lines to go; truncation happens before the line cap.
    const r = applyFilter(f, '\x1b[32mPASSED\x1b[0m a\nFAILED tests/test_long_name.py\nFAILED b\n');
    expect(r.output).toBe('FAILED ...\n... (1 lines truncated)\n');
    expect(r.loss).toBe('whole');
  });

  it('match_output short-circuits every later stage', () => {
    const f = new FilterSet([
      loadFilterDocument(
        `schema_version: 1\nfilters:\n  m:\n    match: 'x'\n    match_output: [{pattern: 'done', message: 'finished'}]\n    on_empty: 'never'\n    max_lines: 1\n`,
        'mo',
      ),
    ]).get('m')!;
    expect(applyFilter(f, 'a\nb\ndone\n')).toEqual({ output: 'finished', loss: 'whole', keptLines: 0 });
  });
});
