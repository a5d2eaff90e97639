// docs/kubernetes.md's values reference is the one generated from values.schema.json and
// values.yaml: a key added, renamed or re-defaulted without the doc fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART, ROOT } from '../../support/helm';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS script outside the TypeScript program
const gen = require(join(ROOT, 'scripts', 'chart-values-reference.cjs')) as { table(): string; docSection(): { current: string } };

describe('docs/kubernetes.md values reference', () => {
  it('matches the schema and the defaults (refresh: node scripts/chart-values-reference.cjs --write)', () => {
    expect(gen.docSection().current).toBe(gen.table());
  });

  it('lists every key of values.yaml', () => {
    const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const table = gen.table();
    const leaves = (o: Record<string, unknown>, path: string[]): string[] =>
      Object.entries(o).flatMap(([k, v]) =>
        v &&
        typeof v === 'object' &&
        !Array.isArray(v) &&
        Object.keys(v).length &&
        !/resources$/.test(k) &&
        !/Labels$|Annotations$|annotations$|labels$|nodeSelector$|document$/.test(k)
          ? leaves(v as Record<string, unknown>, [...path, k])
          : [[...path, k].join('.')],
      );
    for (const key of leaves(values, [])) expect(table).toContain(`| \`${key}\` |`);
  });
});
