#!/usr/bin/env node
// The committed file `npx context-guru-dsl` runs. npm links a workspace's bin at `npm ci` time
// only if the file exists then, and dist/ is built after, so the bin cannot point into dist/.
// It runs the built CLI; on a checkout not built yet, the TypeScript source through the dev
// register script.
const fs = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', 'dist', 'cli.js');
const register = path.join(__dirname, '..', '..', '..', 'scripts', 'register-ts.cjs');
let cli;
if (fs.existsSync(dist)) {
  cli = require(dist);
} else if (fs.existsSync(register)) {
  require(register);
  cli = require(path.join(__dirname, '..', 'src', 'cli.ts'));
} else {
  process.stderr.write('context-guru-dsl: not built; run `npm run build` first\n');
  process.exit(2);
}
process.exitCode = cli.runCli(process.argv.slice(2), (line) => process.stdout.write(`${line}\n`));
