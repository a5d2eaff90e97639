// The standalone admin's boot environment speaks the gateway's codes (ENV_ERRORS): each bad
// variable is one problem with its code, variable and whole message; the real admin main given all
// of them at once exits 1 printing every line; every code it uses is one docs/errors.md lists.
import { parseAdminEnv } from '../../apps/admin/src/admin-env';
import { ENV_ERRORS, type EnvErrorCode } from '../../libs/engine/src/env/env-errors';
import { documentedCodes } from '../support/error-docs';
import { bootEntry, problemsOf as problemsOfParser } from '../support/env-boot';

/** [code, variable, bad value, the whole message it must get]. */
const CASES: Array<[EnvErrorCode, string, string, string]> = [
  ['invalid_integer', 'ADMIN_PORT', '70000', 'ADMIN_PORT="70000": expected an integer between 0 and 65535'],
  ['invalid_integer', 'ADMIN_BODY_LIMIT_BYTES', '1k', 'ADMIN_BODY_LIMIT_BYTES="1k": expected an integer between 1024 and 1073741824'],
  ['invalid_choice', 'MIGRATE_ON_BOOT', 'yes', 'MIGRATE_ON_BOOT="yes": expected one of true, false'],
  // The admin needs a durable store: `none`, which the gateway takes, is not one of its values.
  ['invalid_choice', 'DURABLE_STORE', 'none', 'DURABLE_STORE="none": expected one of postgres, pglite'],
  ['invalid_choice', 'LOG_LEVEL', 'loud', 'LOG_LEVEL="loud": expected one of debug, info, warn, error'],
  ['invalid_url', 'DATABASE_URL', 'mysql://db/cg', 'DATABASE_URL="mysql://db/cg": expected a postgres:// or postgresql:// URL'],
  ['invalid_url', 'REDIS_URL', 'http://cache:6379', 'REDIS_URL="http://cache:6379": expected a redis:// or rediss:// URL'],
  [
    'invalid_url',
    'MIGRATION_DATABASE_URL',
    'postgres-ish://db/cg',
    'MIGRATION_DATABASE_URL="postgres-ish://db/cg": expected a postgres:// or postgresql:// URL',
  ],
  ['invalid_tls', 'PGSSLROOTCERT', '/nonexistent/ca.pem', 'PGSSLROOTCERT="/nonexistent/ca.pem": expected a readable PEM file (ENOENT)'],
];

const problemsOf = (env: Record<string, string>) => problemsOfParser(parseAdminEnv, env);

describe('admin environment error codes', () => {
  it('an environment of good values parses (each case below sets one bad one)', () => {
    const good = {
      ADMIN_PORT: '4100',
      DATABASE_URL: 'postgresql://u@db:5432/cg',
      REDIS_URL: 'rediss://cache:6380',
      DURABLE_STORE: 'postgres',
      MIGRATE_ON_BOOT: 'false',
    };
    expect(problemsOf(good)).toEqual([]);
    expect(parseAdminEnv(good)).toMatchObject({ adminPort: 4100, durableStore: 'postgres', migrateOnBoot: false });
  });

  it.each(CASES)('%s: %s=%j', (code, variable, value, message) => {
    expect(problemsOf({ [variable]: value })).toEqual([{ code, variable, message }]);
  });

  it('the admin main refuses to start, printing every bad variable with its code', async () => {
    const { code, stderr } = await bootEntry('apps/admin/src/main.ts', Object.fromEntries(CASES.map(([, v, value]) => [v, value])));
    expect(code).toBe(1);
    const [head, ...lines] = stderr.trimEnd().split('\n');
    expect(head).toBe('context-guru cannot start: invalid environment:');
    expect(lines.sort()).toEqual(CASES.map(([c, , , message]) => `  - ${c}: ${message}`).sort());
  });

  it('uses only codes of the one table, which docs/errors.md lists', () => {
    const documented = documentedCodes('Environment').map((d) => d.code);
    for (const [c] of CASES) {
      expect(Object.keys(ENV_ERRORS)).toContain(c);
      expect(documented).toContain(c);
    }
  });
});
