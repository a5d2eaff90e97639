// The seed's own example document — the pytest filter with its all-green inline test — must load
// strictly and pass verify exactly as printed in the seed.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { applyFilter, loadFilterDocument, runCli, splitTranscript } from '@context-guru/dsl';

const SEED = join(__dirname, '..', '..', 'fixtures', 'dsl', 'seed-example.yaml');

describe('the seed example document', () => {
  it('loads, with its inline test passing', () => {
    const doc = loadFilterDocument(readFileSync(SEED, 'utf8'), 'seed');
    expect(doc.filters.map((f) => [f.name, f.maxLines, f.onEmpty])).toEqual([['pytest', 80, 'pytest: all passed']]);
    expect(doc.tests).toHaveLength(1);
  });

  it('passes `context-guru-dsl verify`', () => {
    const out: string[] = [];
    expect(runCli(['verify', SEED], (l) => out.push(l))).toBe(0);
    expect(out).toEqual(['ok: 1 document(s), 1 filter(s), 1 test(s), 0 problem(s)']);
  });

  it('reads the test input as a transcript: the command `pytest`, then its output', () => {
    expect(splitTranscript('pytest\n....\n')).toEqual({ command: 'pytest', output: '....\n' });
    const f = loadFilterDocument(readFileSync(SEED, 'utf8'), 'seed').filters[0]!;
    expect(applyFilter(f, '....\n').output).toBe('pytest: all passed');
    // A failing run is not "all passed": the F line survives the strip list.
    expect(applyFilter(f, '..F.\n').output).toBe('..F.\n');
  });
});
