// A tiny project with one planted bug, written fresh for every agent run: `src/stats.js` whose
// total() skips the last element, and a dependency-free test runner whose real output (one TAP
// line per case, 84 cases) is large enough for preset `agent` to offload. File times are pinned so
// `ls -la` prints the same bytes on every run.
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const BUGGY_LINE = '  for (let i = 0; i < xs.length - 1; i++) sum += xs[i];';
export const FIXED_LINE = '  for (let i = 0; i < xs.length; i++) sum += xs[i];';
export const SOURCE_FILE = 'src/stats.js';
export const TEST_COMMAND = 'node test/run.js';

const STATS = `// Small numeric helpers used by the report generator.
function total(xs) {
  let sum = 0;
${BUGGY_LINE}
  return sum;
}

function mean(xs) {
  return xs.length ? total(xs) / xs.length : 0;
}

function clamp(x, lo, hi) {
  return Math.min(hi, Math.max(lo, x));
}

function range(n) {
  return Array.from({ length: n }, (_, i) => i);
}

module.exports = { total, mean, clamp, range };
`;

// Cases over helpers other than total() pass either way, so the failing lines are a small part
// of a long output, as in a real suite.
const RUNNER = `const assert = require('node:assert');
const { total, mean, clamp, range } = require('../src/stats');
const cases = [];
for (let n = 0; n < 30; n++) cases.push(['clamp keeps ' + n + ' within 5..20', () => assert.strictEqual(clamp(n, 5, 20), Math.min(20, Math.max(5, n)))]);
for (let n = 0; n < 30; n++) cases.push(['range(' + n + ') has ' + n + ' entries', () => assert.strictEqual(range(n).length, n)]);
for (let n = 1; n <= 12; n++) cases.push(['mean of ' + n + ' equal values is that value', () => assert.strictEqual(mean(Array(n).fill(n)), n)]);
for (let n = 1; n <= 12; n++) cases.push(['total of 1..' + n + ' is ' + (n * (n + 1)) / 2, () => assert.strictEqual(total(range(n + 1).slice(1)), (n * (n + 1)) / 2)]);
let failed = 0;
console.log('TAP version 13');
cases.forEach(([name, fn], i) => {
  try {
    fn();
    console.log('ok ' + (i + 1) + ' - ' + name);
  } catch (e) {
    failed++;
    console.log('not ok ' + (i + 1) + ' - ' + name);
    console.log('  ---\\n  message: ' + JSON.stringify(e.message.split('\\n')[0]) + '\\n  ...');
  }
});
console.log('1..' + cases.length);
console.log('# pass ' + (cases.length - failed));
console.log('# fail ' + failed);
process.exitCode = failed ? 1 : 0;
`;

const README = '# stats\n\nNumeric helpers for the weekly report. Run the tests with `node test/run.js`.\n';
const PINNED = new Date('2026-01-02T03:04:05Z');

/** Writes the project into `dir` (created if missing). */
export function writeScratchRepo(dir: string): void {
  const files: Record<string, string> = { 'README.md': README, [SOURCE_FILE]: STATS, 'test/run.js': RUNNER };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  for (const rel of [...Object.keys(files), 'src', 'test', '.']) utimesSync(join(dir, rel), PINNED, PINNED);
}
