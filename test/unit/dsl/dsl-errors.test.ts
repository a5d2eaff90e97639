// The DSL error table: every code of DSL_ERRORS is produced here by loading a real document, each
// a DslError carrying that code, and docs/errors.md lists exactly those codes.
import { DSL_ERRORS, DslError, FilterSet, loadFilterDocument, type DslErrorCode } from '@context-guru/dsl';
import { documentedCodes } from '../../support/error-docs';

const filter = (body: string, tests = '') => `schema_version: 1\nfilters:\n  demo:\n    match: '^\\$ demo'\n${body}${tests}`;
const TEST = `tests:\n  demo:\n    - name: one\n      input: "$ demo\\nnoise\\nkeep"\n      expected: "keep"\n`;

function codeOf(load: () => unknown): DslErrorCode | 'loaded' {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(DslError);
    return (err as DslError).code;
  }
  return 'loaded';
}

describe('DSL error codes', () => {
  const cases: Array<[DslErrorCode, () => unknown]> = [
    ['invalid_yaml', () => loadFilterDocument('schema_version: 1\nfilters: [unclosed\n', 'yaml.yaml')],
    ['invalid_document', () => loadFilterDocument(filter("    strip_lines_matching: ['^noise$']\n    colour: red\n"), 'field.yaml')],
    ['invalid_regex', () => loadFilterDocument(filter("    strip_lines_matching: ['(?=noise)']\n"), 'regex.yaml')],
    ['duplicate_filter', () => new FilterSet([loadFilterDocument(filter('', ''), 'a.yaml'), loadFilterDocument(filter('', ''), 'b.yaml')])],
    ['inline_test_failed', () => loadFilterDocument(filter("    strip_lines_matching: ['^keep$']\n", TEST), 'test.yaml')],
  ];

  it('a valid document with a passing inline test loads (the cases below each break one thing)', () => {
    expect(codeOf(() => loadFilterDocument(filter("    strip_lines_matching: ['^noise$']\n", TEST), 'ok.yaml'))).toBe('loaded');
  });

  it.each(cases)('%s', (code, load) => {
    expect(codeOf(load)).toBe(code);
  });

  it('covers every code of the table, and docs/errors.md lists exactly those codes', () => {
    expect(cases.map(([c]) => c).sort()).toEqual(Object.keys(DSL_ERRORS).sort());
    expect(documentedCodes('DSL').map((d) => d.code)).toEqual(Object.keys(DSL_ERRORS));
  });
});
