// The worked example in docs/dsl.md is a real document: it must load strictly, pass its inline
// tests, and behave as the prose around it says.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FilterSet, applyFilter, builtinDocuments, loadFilterDocument, splitTranscript } from '@context-guru/dsl';

const DOC = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'dsl.md'), 'utf8');

function workedExample(): string {
  const section = DOC.slice(DOC.indexOf('## Worked example'));
  const m = /```yaml\n([\s\S]*?)```/.exec(section);
  expect(m).not.toBeNull();
  return m![1]!;
}

describe('docs/dsl.md worked example', () => {
  const doc = loadFilterDocument(workedExample(), 'docs/dsl.md');
  const f = doc.filters[0]!;

  it('loads with its two inline tests passing, alongside every builtin', () => {
    expect(f.name).toBe('gradle');
    expect(doc.tests).toHaveLength(2);
    expect(new FilterSet([...builtinDocuments(), doc]).size).toBe(builtinDocuments().length + 1);
  });

  it('reports Whole loss for the failing build, as the walk-through says', () => {
    const { output } = splitTranscript(doc.tests[1]!.input);
    const r = applyFilter(f, output);
    expect(r.loss).toBe('whole');
    expect(r.output).toContain('> Task :app:test FAILED');
    expect(r.output).toContain('    at shop.CartTest.discountRoundsToCents(CartTest.java:27)');
  });

  it('lists every builtin in the builtins table', () => {
    for (const d of builtinDocuments()) expect(DOC).toContain(`| \`${d.filters[0]!.name}\` |`);
  });
});
