#!/usr/bin/env node
// The committed file `npx context-guru-admin` runs (why it is not dist/cli/cli.js: scripts/workspace-bin.cjs).
const path = require('node:path');
const load = require('../../../scripts/workspace-bin.cjs');

load('context-guru-admin', path.join(__dirname, '..'), 'dist/cli/cli.js', 'src/cli/cli.ts').runCliMain();
