// Every registered component is documented: docs/components/<name>.md exists and names every
// option key its definition decodes by default and every gate it can report, so an operator
// reading /stats can look up any gate label.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REGISTRY } from '@context-guru/components';

const DOCS = join(__dirname, '..', '..', '..', 'docs', 'components');

/** The word as a whole wire name: `min_tokens` must not be satisfied by `min_tokens_total`. */
function mentions(doc: string, word: string): boolean {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_])${escaped}($|[^A-Za-z0-9_])`).test(doc);
}

describe('component docs', () => {
  for (const def of REGISTRY) {
    describe(def.name, () => {
      const path = join(DOCS, `${def.name}.md`);

      it(`has docs/components/${def.name}.md`, () => {
        expect(existsSync(path)).toBe(true);
      });

      it('names every default option key and every gate', () => {
        const doc = existsSync(path) ? readFileSync(path, 'utf8') : '';
        const defaults = def.options(undefined, 'x');
        const keys = typeof defaults === 'object' && defaults !== null ? Object.keys(defaults) : [];
        expect(keys.filter((k) => !mentions(doc, k))).toEqual([]);
        expect(def.gates.filter((g) => !mentions(doc, g))).toEqual([]);
      });
    });
  }

  it('checks whole words only', () => {
    expect(mentions('| `min_tokens` | 50 |', 'min_tokens')).toBe(true);
    expect(mentions('see min_tokens_total', 'min_tokens')).toBe(false);
  });
});
