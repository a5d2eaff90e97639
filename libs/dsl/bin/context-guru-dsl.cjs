#!/usr/bin/env node
// The committed file `npx context-guru-dsl` runs (why it is not dist/cli.js: scripts/workspace-bin.cjs).
const path = require('node:path');
const load = require('../../../scripts/workspace-bin.cjs');

const cli = load('context-guru-dsl', path.join(__dirname, '..'), 'dist/cli.js', 'src/cli.ts');
process.exitCode = cli.runCli(process.argv.slice(2), (line) => process.stdout.write(`${line}\n`));
