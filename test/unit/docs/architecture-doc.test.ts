// docs/architecture.md names the file that owns each step of a request; a rename or a move that
// forgets the doc fails here, so the newcomer's map never points at a file that is gone.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../support/helm';

const DOC = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

/** Every backticked repository path in the doc: `apps/…`, `libs/…`, `test/…` files or folders. */
function namedPaths(text: string): string[] {
  const paths = [...text.matchAll(/`((?:apps|libs|test|bench|charts|scripts)\/[\w./-]+)`/g)].map((m) => m[1] ?? '');
  return [...new Set(paths)];
}

describe('docs/architecture.md', () => {
  it('names paths, and every one of them exists', () => {
    const paths = namedPaths(DOC);
    expect(paths.length).toBeGreaterThan(40);
    expect(paths.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
  });

  it('is linked from the README', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('docs/architecture.md');
  });
});
