// TLS to Postgres as node-pg does it natively: DATABASE_URL's `sslmode`, `sslrootcert`, `sslcert`
// and `sslkey` (node-pg reads the files; `verify-full` verifies the chain against the CA and the
// host name — and so, unlike libpq, do `prefer`, `require` and `verify-ca` unless the URL adds
// `uselibpqcompat=true`). libpq's variables PGSSLROOTCERT, PGSSLCERT, PGSSLKEY and PGSSLMODE
// fill what the URL leaves out (node-pg alone would read PGSSLMODE only, and no file). Checked
// at boot: a file missing or not PEM, or an sslmode node-pg does not know, is refused naming
// where it came from, instead of every connection failing later (or, for an unknown sslmode,
// TLS being used without the operator's intent being known).
import { readPem } from '../tls-files';

/** libpq's variables, as given. */
export interface PgTlsEnv {
  rootCert?: string;
  cert?: string;
  key?: string;
  mode?: string;
}

/** A bad TLS setting: where it came from (the URL's variable or a PGSSL* one), its value, what it takes. */
export interface PgTlsProblem {
  variable: string;
  value: string;
  expected: string;
}

const MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

const PARAMS = [
  { param: 'sslmode', env: 'mode', variable: 'PGSSLMODE' },
  { param: 'sslrootcert', env: 'rootCert', variable: 'PGSSLROOTCERT' },
  { param: 'sslcert', env: 'cert', variable: 'PGSSLCERT' },
  { param: 'sslkey', env: 'key', variable: 'PGSSLKEY' },
] as const;

/**
 * The URL with libpq's variables folded into its parameters (unchanged when none applies), and
 * what is wrong with its TLS settings. `variable` names the URL in messages, never its text
 * (it holds the password): a parameter is quoted as `sslrootcert=/path`.
 */
export function postgresTls<U extends string | undefined>(
  url: U,
  env: PgTlsEnv,
  variable = 'DATABASE_URL',
): { url: U; problems: PgTlsProblem[] } {
  // No usable URL: libpq's variables are still checked (one set means an intent to be honoured).
  const usable = url !== undefined && URL.canParse(url);
  const u = new URL(usable ? url : 'postgres://unset');
  const from = new Map<string, { variable: string; value: (v: string) => string }>();
  let changed = false;
  for (const p of PARAMS) {
    const own = u.searchParams.get(p.param);
    const envValue = env[p.env];
    if (own !== null) from.set(p.param, { variable, value: (v) => `${p.param}=${v}` });
    else if (envValue) {
      u.searchParams.set(p.param, envValue);
      from.set(p.param, { variable: p.variable, value: (v) => v });
      changed = true;
    }
  }
  const problems: PgTlsProblem[] = [];
  const said = (param: string, expected: string) => {
    const f = from.get(param);
    const v = u.searchParams.get(param) ?? '';
    if (f) problems.push({ variable: f.variable, value: f.value(v), expected });
  };
  const mode = u.searchParams.get('sslmode');
  if (mode !== null && !MODES.includes(mode)) said('sslmode', `one of ${MODES.join(', ')}`);
  for (const param of ['sslrootcert', 'sslcert', 'sslkey']) {
    const path = u.searchParams.get(param);
    if (path === null) continue;
    const read = readPem(path);
    if ('problem' in read) said(param, read.problem);
  }
  const [cert, key] = [u.searchParams.has('sslcert'), u.searchParams.has('sslkey')];
  if (cert !== key)
    said(cert ? 'sslcert' : 'sslkey', 'a client certificate and its key together (sslcert with sslkey, or PGSSLCERT with PGSSLKEY)');
  return { url: (usable && changed ? u.toString() : url) as U, problems };
}
