// The gateway's boot-time environment table: every code of ENV_ERRORS comes from parseEnv for one
// bad variable, with a message naming the variable and what it accepts; a real gateway (and the
// embedded process) given a bad value of each refuses to start and prints them all, one line
// each; docs/errors.md lists exactly those codes.
import { parseEnv } from '../../apps/gateway/src/env';
import { ENV_ERRORS, type EnvErrorCode } from '../../libs/engine/src/env/env-errors';
import { documentedCodes } from '../support/error-docs';
import { bootEntry, problemsOf as problemsOfParser } from '../support/env-boot';

/** [code, variable, bad value, the whole message it must get]. */
const CASES: Array<[EnvErrorCode, string, string, string | RegExp]> = [
  ['invalid_integer', 'PORT', 'eighty', 'PORT="eighty": expected an integer between 0 and 65535'],
  ['invalid_integer', 'UPSTREAM_IDLE_TIMEOUT_MS', '0', 'UPSTREAM_IDLE_TIMEOUT_MS="0": expected an integer ≥ 1'],
  ['invalid_choice', 'INJECT_EXPAND', 'sometimes', 'INJECT_EXPAND="sometimes": expected one of auto, always, never'],
  ['invalid_url', 'OPENAI_UPSTREAM', 'ftp://example.com', 'OPENAI_UPSTREAM="ftp://example.com": expected an http(s) URL'],
  ['invalid_url', 'REDIS_URL', '127.0.0.1:6379', 'REDIS_URL="127.0.0.1:6379": expected a URL'],
  [
    'invalid_url',
    'MIGRATION_DATABASE_URL',
    'mysql://db/cg',
    'MIGRATION_DATABASE_URL="mysql://db/cg": expected a postgres:// or postgresql:// URL',
  ],
  [
    'invalid_redis_topology',
    'REDIS_SENTINELS',
    'sentinel-a',
    'REDIS_SENTINELS="sentinel-a": expected host:port[,host:port…] (the first may be a redis:// or rediss:// URL)',
  ],
  [
    'invalid_tls',
    'REDIS_TLS_CA_FILE',
    '/nonexistent/ca.pem',
    'REDIS_TLS_CA_FILE="/nonexistent/ca.pem": expected a readable PEM file (ENOENT)',
  ],
  // One problem, though PGSSLROOTCERT fills both DATABASE_URL and MIGRATION_DATABASE_URL.
  ['invalid_tls', 'PGSSLROOTCERT', '/nonexistent/ca.pem', 'PGSSLROOTCERT="/nonexistent/ca.pem": expected a readable PEM file (ENOENT)'],
  [
    'invalid_duration',
    'CONTEXT_GURU_LLM_TIMEOUT',
    'soon',
    'CONTEXT_GURU_LLM_TIMEOUT="soon": expected a positive duration like 90s, 1m30s, 1500ms or bare seconds',
  ],
  [
    'invalid_price_table',
    'PRICE_TABLE',
    'families: [{ family: x, match: [x], input: -1, output: 1 }]',
    /^PRICE_TABLE: \/families\/0\/input: .+; expected families: \[\{family, match: \[model id prefix, …\], input, output, cache_write\?, cache_read\?\}\]/,
  ],
  ['weak_secret', 'OPS_TOKEN', 'hunter2', 'OPS_TOKEN (7 characters, 7 different): expected at least 24 characters, 8 of them different'],
];

const problemsOf = (env: Record<string, string>) => problemsOfParser(parseEnv, env);

describe('gateway environment error codes', () => {
  it('an environment of good values parses (each case below sets one bad one)', () => {
    expect(
      problemsOf({ PORT: '4000', INJECT_EXPAND: 'never', OPENAI_UPSTREAM: 'http://127.0.0.1:9', CONTEXT_GURU_LLM_TIMEOUT: '1m' }),
    ).toEqual([]);
  });

  const expectMessage = (text: string | undefined, message: string | RegExp) =>
    typeof message === 'string' ? expect(text).toBe(message) : expect(text).toMatch(message);

  it.each(CASES)('%s: %s=%j', (code, variable, value, message) => {
    const problems = problemsOf({ [variable]: value });
    expect(problems.map((p) => [p.code, p.variable])).toEqual([[code, variable]]);
    expectMessage(problems[0]!.message, message);
  });

  const everyBadValue = Object.fromEntries(CASES.map(([, variable, value]) => [variable, value]));
  it.each(['apps/gateway/src/main.ts', 'apps/embedded/src/main.ts'])(
    '%s refuses to start, printing every bad variable with its code',
    async (entry) => {
      const { code, stderr } = await bootEntry(entry, everyBadValue);
      expect(code).toBe(1);
      const [head, ...lines] = stderr.trimEnd().split('\n');
      expect(head).toBe('context-guru cannot start: invalid environment:');
      expect(lines).toHaveLength(CASES.length);
      for (const [c, variable, , message] of CASES) {
        const line = lines.find((l) => l.startsWith(`  - ${c}: ${variable}`));
        expectMessage(line?.slice(`  - ${c}: `.length), message);
      }
    },
  );

  it('covers every code of the table, and docs/errors.md lists exactly those codes', () => {
    expect([...new Set(CASES.map(([c]) => c))].sort()).toEqual(Object.keys(ENV_ERRORS).sort());
    expect(documentedCodes('Environment').map((d) => d.code)).toEqual(Object.keys(ENV_ERRORS));
  });
});
