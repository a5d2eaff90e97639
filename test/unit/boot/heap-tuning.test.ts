// The gateway fixes V8's old-generation growing factor (libs/engine/src/shared/heap-tuning.ts): V8's own
// factor follows on-heap allocation speed and idle spells, and fell to 1.1-1.3 under a proxy's
// buffer-heavy bursts. V8 prints the factor of every limit it sets under --trace-gc-verbose.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../support/helm';

/** The factor V8 applied to the old-generation limit at a forced full GC in a fresh node. */
function limitFactor(tune: boolean, nodeFlags: string[] = []): string {
  const script = [
    tune ? `require(${JSON.stringify(join(ROOT, 'libs/engine/src/shared/heap-tuning.ts'))}).tuneHeap();` : '',
    'const live = Array.from({ length: 200000 }, (_, i) => ({ i }));',
    'globalThis.gc();',
    'process.stdout.write(String(live.length));',
  ].join('\n');
  const r = spawnSync(
    process.execPath,
    ['--trace-gc-verbose', '--expose-gc', ...nodeFlags, '-r', join(ROOT, 'scripts/register-ts.cjs'), '-e', script],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
  );
  expect(r.status).toBe(0);
  const limits = [...r.stdout.matchAll(/\[HeapController\] Limit: .* \((\d+\.\d)\)/g)];
  expect(limits.length).toBeGreaterThan(0);
  return limits.at(-1)![1]!;
}

describe('the gateway heap tuning', () => {
  it('grows the old generation by a fixed factor of 2 where V8 would pick its own', () => {
    expect(limitFactor(false)).not.toBe('2.0');
    expect(limitFactor(true)).toBe('2.0');
  });

  it("leaves an operator's own --heap-growing-percent in force", () => {
    expect(limitFactor(true, ['--heap-growing-percent=50'])).toBe('1.5');
  });
});

/**
 * Whether a function run once still has its bytecode after collections that flush every
 * function they can (--stress-flush-code), as V8's own status bits tell (kIsLazy: flushed).
 */
function keepsBytecode(tune: boolean | 'embedded', nodeFlags: string[] = []): boolean {
  const options = tune === 'embedded' ? '{ keepBytecode: false }' : '';
  const script = [
    tune ? `require(${JSON.stringify(join(ROOT, 'libs/engine/src/shared/heap-tuning.ts'))}).tuneHeap(${options});` : '',
    'function ranOnce(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s; }',
    'ranOnce(3);',
    'for (let i = 0; i < 10; i++) globalThis.gc();',
    'const IS_LAZY = 1 << 18;',
    "process.stdout.write((%GetOptimizationStatus(ranOnce) & IS_LAZY) === 0 ? 'kept' : 'flushed');",
  ].join('\n');
  const r = spawnSync(
    process.execPath,
    [
      '--allow-natives-syntax',
      '--expose-gc',
      '--stress-flush-code',
      ...nodeFlags,
      '-r',
      join(ROOT, 'scripts/register-ts.cjs'),
      '-e',
      script,
    ],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
  );
  expect(r.stderr).toBe('');
  expect(['kept', 'flushed']).toContain(r.stdout);
  return r.stdout === 'kept';
}

describe('the gateway keeps the bytecode it has run', () => {
  it('is flushed by V8 on its own and kept once tuned', () => {
    expect(keepsBytecode(false)).toBe(false);
    expect(keepsBytecode(true)).toBe(true);
  });

  it('leaves flushing on where asked to (the embedded process, held to its RSS bound)', () => {
    expect(keepsBytecode('embedded')).toBe(false);
  });

  it("leaves an operator's own --flush-bytecode in force", () => {
    expect(keepsBytecode(true, ['--flush-bytecode'])).toBe(false);
    expect(keepsBytecode(true, ['--flush_bytecode'])).toBe(false);
  });
});
