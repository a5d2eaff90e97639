// Summarises a V8 .cpuprofile of the gateway by request step: each sample goes to the outermost
// step function on its stack (decode, session load, pipeline, encode, flush, ...), pipeline samples
// also to the innermost component directory (libs/components/src/<dir>/<file>), and samples with
// no step on the stack to where they ran (GC, PGlite, Redis, HTTP and sockets, other).
// Usage: node bench/procs/profile-steps.cjs file.cpuprofile [turns]  (turns: µs per turn too)
const { readFileSync } = require('node:fs');

const [file, turnsArg] = process.argv.slice(2);
const turns = Number(turnsArg ?? 0);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Outermost match wins: the first step a request enters owns everything under it.
const STEPS = [
  ['decode (turn cache text + decode)', (f) => /^(decodeStep|bodyText|repeatDecoded)$/.test(f.functionName)],
  ['session load', (f) => /^(openSession|freshLoad|turnAt|repeatTurnAt|advanceBypassed)$/.test(f.functionName)],
  ['holdout', (f) => f.functionName === 'holdoutStep'],
  ['pipeline', (f) => f.functionName === 'runPipelineStep'],
  ['encode (guard, splice)', (f) => f.functionName === 'encodeStep'],
  ['flush (store writes)', (f) => f.functionName === 'flushStep'],
  ['remember / replay', (f) => /^(rememberRun|replayRepeat|repeatHolds)$/.test(f.functionName)],
  ['forward + respond', (f) => /^(forwardStep|respondStep|upstreamBytes)$/.test(f.functionName)],
  ['end (stats, metrics, usage)', (f) => f.functionName === 'endRequest'],
];
const component = (f) => /libs\/components\/src\/([^/]+\/[^/.]+)/.exec(f.url)?.[1];
// The project's own file a sample ran under (apps/<app>/src/..., libs/<lib>/src/...).
const projectFile = (f) => /(apps|libs)\/[^/]+\/src\/[^.]+/.exec(f.url)?.[0];
const place = (f) =>
  f.functionName === '(garbage collector)'
    ? 'GC'
    : /pglite/.test(f.url)
      ? 'PGlite (outside a step)'
      : /ioredis|redis/.test(f.url)
        ? 'Redis client (outside a step)'
        : /node_modules\/pg/.test(f.url)
          ? 'Postgres client (outside a step)'
          : /storage\/src/.test(f.url)
            ? 'stores (outside a step: write-behind, TTL)'
            : /^node:|undici|fastify|^$/.test(f.url)
              ? 'HTTP, sockets, node internals'
              : 'other';

const totals = new Map();
const components = new Map();
const files = new Map();
let busy = 0;
const add = (m, k, us) => m.set(k, (m.get(k) ?? 0) + us);
for (let i = 0; i < prof.samples.length; i++) {
  const us = prof.timeDeltas[i + 1] ?? 0;
  const leaf = byId.get(prof.samples[i]);
  if (leaf.callFrame.functionName === '(idle)') continue;
  busy += us;
  let step;
  let comp;
  let own;
  for (let id = leaf.id; id !== undefined; id = parent.get(id)) {
    const f = byId.get(id).callFrame;
    comp ??= component(f);
    own ??= projectFile(f);
    for (const [name, match] of STEPS) if (match(f)) step = name;
  }
  // After an await the stack starts at the resumed function: no step frame, only its own file.
  const where = step ?? (own ? `(no step on the stack) ${own}` : place(leaf.callFrame));
  add(totals, where, us);
  add(files, own ?? place(leaf.callFrame), us);
  if (comp) add(components, comp, us);
}
const row = (k, us) =>
  `| ${k} | ${((us / busy) * 100).toFixed(1)} | ${(us / 1000).toFixed(0)} |${turns ? ` ${(us / turns).toFixed(0)} |` : ''}`;
const head = `| where | % of busy | ms |${turns ? ' µs / turn |' : ''}\n|---|---|---|${turns ? '---|' : ''}`;
const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]);
process.stdout.write(
  `busy ${(busy / 1000).toFixed(0)} ms${turns ? `, ${turns} turns: ${(busy / turns).toFixed(0)} µs / turn` : ''}\n\n${head}\n${sorted(
    totals,
  )
    .slice(0, 30)
    .map(([k, us]) => row(k, us))
    .join('\n')}\n\nby innermost project file:\n\n${head}\n${sorted(files)
    .slice(0, 30)
    .map(([k, us]) => row(k, us))
    .join('\n')}\n\ncomponents (any stack):\n\n${head}\n${sorted(components)
    .slice(0, 25)
    .map(([k, us]) => row(k, us))
    .join('\n')}\n`,
);
