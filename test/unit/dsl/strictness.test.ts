// Strict loading: each malformed document under test/fixtures/dsl/invalid carries, in its first
// line, the line, filter, field and message fragment its rejection must name.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DslError, FilterSet, checkFilterDocument, loadFilterDocument, parseFilterDocument } from '@context-guru/dsl';

const DIR = join(__dirname, '..', '..', 'fixtures', 'dsl', 'invalid');

function expectation(text: string): Record<string, string> {
  const head = text.split('\n')[0]!;
  expect(head.startsWith('# expect: ')).toBe(true);
  const out: Record<string, string> = {};
  const body = head.slice('# expect: '.length);
  const errorAt = body.indexOf('error=');
  out.error = body.slice(errorAt + 'error='.length);
  for (const kv of body.slice(0, errorAt).trim().split(/\s+/).filter(Boolean)) {
    const [k, v] = kv.split('=');
    out[k!] = v!;
  }
  return out;
}

function rejection(text: string, source: string): DslError {
  try {
    loadFilterDocument(text, source);
  } catch (err) {
    expect(err).toBeInstanceOf(DslError);
    return err as DslError;
  }
  throw new Error(`${source} loaded, but it must be rejected`);
}

describe('strict document loading', () => {
  for (const file of readdirSync(DIR).sort()) {
    it(`rejects ${file}`, () => {
      const text = readFileSync(join(DIR, file), 'utf8');
      const want = expectation(text);
      const err = rejection(text, file);
      expect(err.source).toBe(file);
      expect(err.line).toBe(Number(want.line));
      expect(err.filter).toBe(want.filter);
      expect(err.field).toBe(want.field);
      expect(err.message).toContain(want.error);
      // The message alone tells an author where to look.
      expect(err.message).toContain(`${file}:${want.line}`);
      if (want.filter) expect(err.message).toContain(`filter "${want.filter}"`);
      if (want.field) expect(err.message).toContain(`field "${want.field}"`);
    });
  }

  it('covers every strictness case the DSL promises', () => {
    const names = readdirSync(DIR);
    for (const n of ['unknown-field', 'bad-regex', 'strip-and-keep', 'missing-match', 'duplicate-filter-name', 'failing-inline-test']) {
      expect(names).toContain(`${n}.yaml`);
    }
  });

  it('a filter whose inline test fails never loads, even when its other tests pass', () => {
    const check = checkFilterDocument(readFileSync(join(DIR, 'failing-inline-test.yaml'), 'utf8'), 'f.yaml');
    expect(check.failures.map((f) => f.test)).toEqual(['keeps failures']);
    expect(() => loadFilterDocument(readFileSync(join(DIR, 'failing-inline-test.yaml'), 'utf8'), 'f.yaml')).toThrow(DslError);
  });

  it('rejects a filter name defined in two documents, naming both places', () => {
    const a = parseFilterDocument('schema_version: 1\nfilters:\n  pytest:\n    match: pytest\n', 'a.yaml');
    const b = parseFilterDocument(
      'schema_version: 1\nfilters:\n  other:\n    match: x\n  pytest:\n    match: "=+ test session"\n',
      'b.yaml',
    );
    let err: unknown;
    try {
      new FilterSet([a, b]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DslError);
    expect((err as DslError).message).toBe(
      'b.yaml:5: filter "pytest": field "filters": duplicate filter name (already defined at a.yaml:3)',
    );
  });

  it('rejects an empty document and a document without filters', () => {
    expect(() => loadFilterDocument('', 'empty.yaml')).toThrow(/empty document/);
    expect(() => loadFilterDocument('schema_version: 1\n', 'nofilters.yaml')).toThrow(/filters.*missing/);
    expect(() => loadFilterDocument('schema_version: 1\nfilters: {}\n', 'none.yaml')).toThrow(/at least one filter/);
  });

  it('caps list lengths, so one filter cannot ask for unbounded work per line', () => {
    const many = Array.from({ length: 257 }, (_, i) => `      - 'noise ${i}'`).join('\n');
    expect(() =>
      loadFilterDocument(`schema_version: 1\nfilters:\n  big:\n    match: x\n    strip_lines_matching:\n${many}\n`, 'big.yaml'),
    ).toThrow('big.yaml:6: filter "big": field "strip_lines_matching": lists at most 256 entries (got 257)');
  });

  it('refuses YAML aliases', () => {
    const doc = "schema_version: 1\nfilters:\n  a:\n    match: &m 'x'\n  b:\n    match: *m\n";
    expect(() => loadFilterDocument(doc, 'alias.yaml')).toThrow(/aliases are not supported/);
  });
});
