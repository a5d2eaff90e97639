// The README's workspace commands as a new user runs them after `npm ci` (and `npm start`, which
// builds): `npx context-guru-dsl verify <file>` and `npx context-guru-admin …` resolve to this
// workspace's bins (never the registry).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '../..');

const GOOD = `schema_version: 1
filters:
  hello:
    match: '^\\$ hello'
    strip_lines_matching: ['^noise']
tests:
  hello:
    - name: drops-noise
      input: |
        $ hello
        noise line
        kept line
      expected: |
        kept line
`;

let dir: string;
beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'cg-npx-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const npxBin = (bin: string, ...args: string[]) =>
  spawnSync('npx', ['--no', bin, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, npm_config_offline: 'true' },
  });
const npx = (...args: string[]) => npxBin('context-guru-dsl', ...args);

/** The bin npm links at `npm ci` time must be a committed file (dist/ does not exist yet then). */
function expectCommittedBin(pkgDir: string, bin: string): void {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, pkgDir, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  const target = path.join(pkgDir, pkg.bin[bin]!);
  expect(execFileSync('git', ['ls-files', '--error-unmatch', target], { cwd: ROOT, encoding: 'utf8' }).trim()).toBe(target);
}

describe('npx context-guru-dsl verify', () => {
  it('the bin npm links at `npm ci` time is a committed file (dist/ does not exist yet then)', () => {
    expectCommittedBin('libs/dsl', 'context-guru-dsl');
  });

  it('passes a good document (exit 0)', () => {
    const file = path.join(dir, 'good.yaml');
    writeFileSync(file, GOOD);
    const r = npx('verify', file);
    expect(r.stdout).toContain('ok: 1 document(s), 1 filter(s), 1 test(s), 0 problem(s)');
    expect(r.status).toBe(0);
  });

  it('prints a failing inline test as expected-vs-actual (exit 1)', () => {
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(
      file,
      GOOD.replace('        kept line\n`', '        something else\n`').replace(
        /expected: \|\n {8}kept line/,
        'expected: |\n        something else',
      ),
    );
    const r = npx('verify', file);
    expect(r.stdout).toMatch(/FAIL .*bad\.yaml:\d+: filter "hello" test "drops-noise"/);
    expect(r.status).toBe(1);
  });
});

describe('npx context-guru-admin', () => {
  it('the bin npm links at `npm ci` time is a committed file (dist/ does not exist yet then)', () => {
    expectCommittedBin('apps/admin', 'context-guru-admin');
  });

  it('runs the workspace CLI: no command prints its usage (exit 2)', () => {
    const r = npxBin('context-guru-admin');
    expect(r.stdout).toContain('usage: context-guru-admin <command> [args]');
    expect(r.status).toBe(2);
  });
});
