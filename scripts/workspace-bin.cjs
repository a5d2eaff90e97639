// What the committed workspace bins (`npx context-guru-dsl`, `npx context-guru-admin`) load. npm
// links a workspace's bin at `npm ci` time only if the file exists then, and dist/ is built after,
// so a bin cannot point into dist/. This returns the built module; on a checkout not built yet,
// the TypeScript source through the dev register script.
const fs = require('node:fs');
const path = require('node:path');

module.exports = function loadWorkspaceCli(name, packageDir, built, source) {
  const dist = path.join(packageDir, built);
  if (fs.existsSync(dist)) return require(dist);
  const register = path.join(__dirname, 'register-ts.cjs');
  if (fs.existsSync(register)) {
    require(register);
    return require(path.join(packageDir, source));
  }
  process.stderr.write(`${name}: not built; run \`npm run build\` first\n`);
  process.exit(2);
};
