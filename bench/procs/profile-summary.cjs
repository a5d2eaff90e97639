// Summarises a V8 .cpuprofile by self time per function (name, file:line), the largest first.
// Usage: node bench/procs/profile-summary.cjs file.cpuprofile [top=25]
const { readFileSync } = require('node:fs');

const [file, topArg] = process.argv.slice(2);
const top = Number(topArg ?? 25);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
// Sample i lasted timeDeltas[i + 1]; the sum per node is its self time.
const self = new Map();
for (let i = 0; i < prof.samples.length; i++) {
  const dt = prof.timeDeltas[i + 1] ?? 0;
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const rows = new Map();
for (const [id, us] of self) {
  const f = byId.get(id).callFrame;
  const where = f.url ? `${f.url.replace(/^.*\/(node_modules|apps|libs)\//, '$1/')}:${f.lineNumber + 1}` : '';
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
  rows.set(key, (rows.get(key) ?? 0) + us);
}
const idle = [...rows].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0);
process.stdout.write(
  `total ${(total / 1000).toFixed(0)} ms, idle ${((idle / total) * 100).toFixed(1)} %\n\n| self % of busy | self ms | function |\n|---|---|---|\n`,
);
const busy = total - idle;
for (const [k, us] of [...rows]
  .filter(([k]) => !k.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top)) {
  process.stdout.write(`| ${((us / busy) * 100).toFixed(1)} | ${(us / 1000).toFixed(0)} | \`${k.replace(/\|/g, '\\|')}\` |\n`);
}
