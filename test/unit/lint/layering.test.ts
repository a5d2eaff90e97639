// `npm run lint` fails on a back-running import and on an import cycle: each test plants one in
// the real tree and lints it with the repository's own config (eslint.config.mjs) through the
// ESLint Node API. Only the type-aware rules are switched off, so no TypeScript program is built.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ESLint } from 'eslint';
import { ROOT } from '../../support/helm';

const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: [
    {
      files: ['**/*.ts'],
      languageOptions: { parserOptions: { project: null } },
      rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/prefer-promise-reject-errors': 'off' },
    },
  ],
});

const planted: string[] = [];

/** A folder of planted files inside `folder` of the real tree, removed after the tests. */
function plantDir(folder: string): string {
  const dir = mkdtempSync(join(ROOT, folder, 'lint-plant-'));
  planted.push(dir);
  return dir;
}

async function ruleErrors(file: string): Promise<{ rule: string | null; message: string }[]> {
  const [result] = await eslint.lintFiles([file]);
  return (result?.messages ?? []).filter((m) => m.severity === 2).map((m) => ({ rule: m.ruleId, message: m.message }));
}

afterAll(() => {
  for (const dir of planted) rmSync(dir, { recursive: true, force: true });
});

describe('layering lint rules', () => {
  it('refuses an import that runs against the folder order', async () => {
    // http/ is the gateway's lowest layer; proxy/ sits above it.
    const file = join(plantDir('apps/gateway/src/http'), 'backward.ts');
    writeFileSync(file, "import { chatRoute } from '../../proxy/chat.route';\n\nexport const planted = chatRoute;\n");
    const errors = await ruleErrors(file);
    expect(errors).toEqual([expect.objectContaining({ rule: 'layering/folder-order' })]);
    expect(errors[0]?.message).toContain("'http' (layer 0) may not import 'proxy'");
  });

  it('accepts the same import running down the order', async () => {
    const file = join(plantDir('apps/gateway/src/proxy'), 'forward.ts');
    writeFileSync(file, "import { readBody } from '../../http/body-read';\n\nexport const planted = readBody;\n");
    expect(await ruleErrors(file)).toEqual([]);
  });

  it('refuses an import cycle, type-only included', async () => {
    const dir = plantDir('libs/engine/src/wire');
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './b';\n\nexport interface A {\n  b?: B;\n}\n");
    writeFileSync(join(dir, 'b.ts'), "import type { A } from './a';\n\nexport interface B {\n  a?: A;\n}\n");
    const errors = await ruleErrors(join(dir, 'a.ts'));
    expect(errors).toEqual([expect.objectContaining({ rule: 'layering/no-cycle' })]);
    const a = relative(ROOT, join(dir, 'a.ts'));
    expect(errors[0]?.message).toBe(`Import cycle: ${a} → ${relative(ROOT, join(dir, 'b.ts'))} → ${a}.`);
  });

  it('refuses a folder the order does not name', async () => {
    const dir = plantDir('libs/engine/src');
    writeFileSync(join(dir, 'loose.ts'), 'export const planted = 1;\n');
    const errors = await ruleErrors(join(dir, 'loose.ts'));
    expect(errors).toEqual([expect.objectContaining({ rule: 'layering/folder-order' })]);
    expect(errors[0]?.message).toContain('is not in the folder order of libs/engine/src');
  });

  it('keeps the admin off the gateway', async () => {
    const file = join(plantDir('apps/admin/src'), 'borrow.ts');
    writeFileSync(file, "import { parseEnv } from '@context-guru/gateway';\n\nexport const planted = parseEnv;\n");
    expect(await ruleErrors(file)).toEqual([expect.objectContaining({ rule: 'no-restricted-imports' })]);
  });
});
