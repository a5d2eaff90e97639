// The README's filter check, as a new user runs it after `npm ci && npm run build`:
// `npx context-guru-dsl verify <file>` resolves to this workspace's bin (never the registry).
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

const npx = (...args: string[]) =>
  spawnSync('npx', ['--no', 'context-guru-dsl', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, npm_config_offline: 'true' },
  });

describe('npx context-guru-dsl verify', () => {
  it('the bin npm links at `npm ci` time is a committed file (dist/ does not exist yet then)', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'libs/dsl/package.json'), 'utf8')) as { bin: Record<string, string> };
    const target = path.join('libs/dsl', pkg.bin['context-guru-dsl']!);
    expect(execFileSync('git', ['ls-files', '--error-unmatch', target], { cwd: ROOT, encoding: 'utf8' }).trim()).toBe(target);
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
