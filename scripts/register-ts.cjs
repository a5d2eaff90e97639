// Lets the benchmarks run TypeScript directly (dev-only): transpile each .ts with swc on require
// and map the workspace packages to their sources, so `npm run bench` measures the current tree.
const { transformSync } = require('@swc/core');
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

const root = path.join(__dirname, '..');
const aliases = {
  '@context-guru/components': path.join(root, 'libs/components/src/index.ts'),
  '@context-guru/dsl': path.join(root, 'libs/dsl/src/index.ts'),
  '@context-guru/storage': path.join(root, 'libs/storage/src/index.ts'),
  '@context-guru/engine': path.join(root, 'libs/engine/src/index.ts'),
  '@context-guru/admin': path.join(root, 'apps/admin/src/index.ts'),
  '@context-guru/gateway': path.join(root, 'apps/gateway/src/index.ts'),
  '@context-guru/embedded': path.join(root, 'apps/embedded/src/index.ts'),
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolve.call(this, aliases[request] ?? request, ...rest);
};
require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
