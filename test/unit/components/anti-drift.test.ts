// Lists declared twice must agree: component files ⇔ the registry, presets in the README and the
// docs ⇔ PRESETS.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRESETS, REGISTRY } from '@context-guru/components';

const ROOT = join(__dirname, '../../..');
const SRC = join(ROOT, 'libs/components/src');

describe('component files ⇔ registry', () => {
  const files = ['reformat', 'offload'].flatMap((dir) =>
    readdirSync(join(SRC, dir))
      .filter((f) => f.endsWith('.component.ts'))
      .map((f) => ({ dir, name: f.replace(/\.component\.ts$/, '').replace(/-/g, '_') })),
  );

  it('every component file is registered, and every registered component has its file', () => {
    expect(files.map((f) => f.name).sort()).toEqual(REGISTRY.map((d) => d.name).sort());
  });

  it('a component lives in the folder of its kind', () => {
    for (const f of files)
      expect(`${f.dir}:${REGISTRY.find((d) => d.name === f.name)!.kind}`).toBe(`${f.dir}:${f.dir === 'reformat' ? 'reformat' : 'offload'}`);
  });
});

describe('presets in docs/configuration.md ⇔ PRESETS', () => {
  it('lists every preset with exactly its pipeline', () => {
    const doc = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
    const line = doc.slice(doc.indexOf('Presets ('), doc.indexOf('\n\n', doc.indexOf('Presets ('))).replace(/\s+/g, ' ');
    const listed: Record<string, string[]> = {};
    for (const m of line.matchAll(/`(\w+)` (\[[^\]]*\]|\((\w+) \+ ([^)]*)\))/g)) {
      if (m[3]) listed[m[1]!] = [...(listed[m[3]] ?? []), ...m[4]!.split(',').map((s) => s.trim())];
      else
        listed[m[1]!] = m[2]!
          .slice(1, -1)
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
    }
    const expected = Object.fromEntries(Object.entries(PRESETS).map(([k, v]) => [k, [...v]]));
    // `aggressive` is written as "balanced + smartcrush, extract": compare as sets there.
    expect(Object.keys(listed).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, list] of Object.entries(expected)) expect([...listed[name]!].sort()).toEqual([...list].sort());
  });
});
