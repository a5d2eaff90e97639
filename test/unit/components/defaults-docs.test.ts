// Anti-drift: the defaults the docs state are the defaults the option schemas apply. Each
// docs/components/<name>.md has a `| Key | Default | Meaning |` table; every row's default must be
// what the component decodes from an empty block (nested keys dotted, `—` for "no default"), and
// every decoded key must have its row. The pipeline document's own blocks (store, shadow) likewise.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REGISTRY, ShadowOptions, parsePipelineDocument } from '@context-guru/components';

const ROOT = join(__dirname, '../../..');

/** `{a: {b: 1}}` → `{'a.b': 1}`; arrays and scalars are leaves. */
function flatten(v: unknown, prefix = ''): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { [prefix]: v };
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) Object.assign(out, flatten(x, prefix ? `${prefix}.${k}` : k));
  return out;
}

/** A decoded default as the docs write it: `3`, `full`, `false`, `[]`, `—` when there is none. */
function written(v: unknown): string {
  if (v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function documentedDefaults(name: string): Record<string, string> {
  const doc = readFileSync(join(ROOT, 'docs/components', `${name}.md`), 'utf8');
  const start = doc.indexOf('| Key | Default |');
  expect([name, start >= 0]).toEqual([name, true]);
  const rows: Record<string, string> = {};
  for (const line of doc.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const [, key, def] = line.split('|').map((c) => c.trim());
    rows[key!.replace(/`/g, '')] = def!.replace(/`/g, '');
  }
  return rows;
}

describe('documented defaults ⇔ option schemas', () => {
  for (const def of REGISTRY) {
    it(`${def.name}: every row of its docs table is the schema's default, and every default has a row`, () => {
      const decoded = flatten(def.options(undefined, `components.${def.name}`));
      const rows = documentedDefaults(def.name);
      const fromSchema = Object.fromEntries(Object.keys(rows).map((k) => [k, written(decoded[k])]));
      expect(rows).toEqual(fromSchema);
      expect(Object.keys(decoded).filter((k) => !(k in rows))).toEqual([]);
    });
  }

  it('the store block: README shows the defaults the document applies', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const m = /store: \{ enabled: (\w+), ttl_seconds: (\d+), max_entries: (\d+) \}/.exec(readme);
    expect(m).not.toBeNull();
    const store = parsePipelineDocument({ store: {} }).store!;
    expect({ enabled: String(store.enabled), ttl_seconds: store.ttl_seconds, max_entries: store.max_entries }).toEqual({
      enabled: m![1],
      ttl_seconds: Number(m![2]),
      max_entries: Number(m![3]),
    });
  });

  it('the shadow block: docs/shadow.md states the sample default the schema applies; holdout.fraction has none', () => {
    const doc = readFileSync(join(ROOT, 'docs/shadow.md'), 'utf8');
    const m = /sample: ([\d.]+)\s+#.*\(default ([\d.]+)\)/.exec(doc);
    expect(m).not.toBeNull();
    expect(Number(m![2])).toBe(ShadowOptions.properties.sample.default);
    expect(parsePipelineDocument({ shadow: { version: 2 } }).shadow).toEqual({ version: 2, sample: Number(m![2]) });
    expect(() => parsePipelineDocument({ holdout: {} })).toThrow('config.holdout.fraction');
  });
});
