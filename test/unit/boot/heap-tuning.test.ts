// The gateway fixes V8's old-generation growing factor (apps/gateway/src/heap-tuning.ts): V8's own
// factor follows on-heap allocation speed and idle spells, and fell to 1.1-1.3 under a proxy's
// buffer-heavy bursts. V8 prints the factor of every limit it sets under --trace-gc-verbose.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../support/helm';

/** The factor V8 applied to the old-generation limit at a forced full GC in a fresh node. */
function limitFactor(tune: boolean, nodeFlags: string[] = []): string {
  const script = [
    tune ? `require(${JSON.stringify(join(ROOT, 'apps/gateway/src/heap-tuning.ts'))}).tuneHeap();` : '',
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
