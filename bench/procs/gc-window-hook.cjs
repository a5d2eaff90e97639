// Preloaded (-r) into a process under study: keeps running totals of its garbage collections (count
// and pause per kind, from PerformanceObserver) and, on every SIGUSR2, appends one JSON line to
// $CG_GC_FILE with those totals and the old space's used bytes. Two lines around a load window give
// what the window cost in GC (bench/gc-window.ts); between major GCs, old-space growth is what the
// scavenges promoted (plus whatever was allocated old directly, e.g. bytecode compiled late).
const { constants } = require('node:perf_hooks');
const { appendFileSync } = require('node:fs');
const { getHeapSpaceStatistics } = require('node:v8');

const KIND = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major' };
const totals = { minor: { n: 0, ms: 0 }, major: { n: 0, ms: 0 }, other: { n: 0, ms: 0 } };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const t = totals[KIND[e.detail?.kind] ?? 'other'];
    t.n++;
    t.ms += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

const oldUsed = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;
process.on('SIGUSR2', () => appendFileSync(process.env.CG_GC_FILE, `${JSON.stringify({ ...totals, oldUsed: oldUsed() })}\n`));
