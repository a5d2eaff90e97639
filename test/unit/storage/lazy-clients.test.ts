// ioredis and pg are loaded by the first Redis store, control channel or Postgres pool, never at
// import: a gateway on the memory store (or PGlite) does not carry them (≈ 20 MB resident).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

it('importing the gateway context and the storage lib loads neither ioredis nor pg', () => {
  // A process of its own: jest's module registry is not node's, and the point is node's.
  const loaded = execFileSync(
    process.execPath,
    [
      '-r',
      join(ROOT, 'scripts', 'register-ts.cjs'),
      '-e',
      `require(${JSON.stringify(join(ROOT, 'apps/gateway/src/gateway-context.ts'))});
       require(${JSON.stringify(join(ROOT, 'libs/storage/src/index.ts'))});
       const names = Object.keys(require.cache).map((k) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(k)?.[1]);
       process.stdout.write(JSON.stringify([...new Set(names.filter((n) => n === 'ioredis' || n === 'pg'))]));`,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect(JSON.parse(loaded)).toEqual([]);
});
