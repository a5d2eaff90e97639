// A private CA (and optionally a client certificate) for a rediss:// endpoint of any topology:
// REDIS_TLS_CA_FILE, REDIS_TLS_CERT_FILE, REDIS_TLS_KEY_FILE. Read once, at boot: a file that is
// missing or not PEM is refused naming its variable. Given with a plaintext redis:// endpoint they
// are refused too — a CA that silently goes unused would leave the operator believing the link
// is encrypted.
import { readPem } from '../tls-files';
import type { RedisEndpoint, RedisEnvProblem, RedisTls } from './redis-connection';

/** The paths as the variables give them. */
export interface RedisTlsEnv {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

const VARIABLES = { caFile: 'REDIS_TLS_CA_FILE', certFile: 'REDIS_TLS_CERT_FILE', keyFile: 'REDIS_TLS_KEY_FILE' } as const;
const FIELD = { caFile: 'ca', certFile: 'cert', keyFile: 'key' } as const;

/** The endpoint with the files' PEM texts applied (as it was when no variable is set), or what is wrong. */
export function withRedisTls(
  endpoint: RedisEndpoint | undefined,
  env: RedisTlsEnv,
): { endpoint?: RedisEndpoint; problems: RedisEnvProblem[] } {
  const given = (Object.keys(VARIABLES) as Array<keyof RedisTlsEnv>).filter((k) => env[k]);
  const first = given[0];
  if (first === undefined) return { endpoint, problems: [] };
  const problems: RedisEnvProblem[] = [];
  const tls: RedisTls = {};
  for (const k of given) {
    const path = env[k] ?? '';
    const read = readPem(path);
    if ('pem' in read) tls[FIELD[k]] = read.pem;
    else problems.push({ variable: VARIABLES[k], value: path, expected: read.problem });
  }
  if (Boolean(env.certFile) !== Boolean(env.keyFile)) {
    const missing = env.certFile ? 'keyFile' : 'certFile';
    problems.push({
      variable: VARIABLES[missing],
      value: '',
      expected: `set with ${VARIABLES[env.certFile ? 'certFile' : 'keyFile']} (a client certificate and its key)`,
    });
  }
  // The files are checked even with no endpoint: a variable set means an intent to be honoured.
  if (endpoint === undefined) return { problems };
  if (!isTls(endpoint)) {
    problems.push({
      variable: VARIABLES[first],
      value: env[first] ?? '',
      expected: 'a rediss:// endpoint to apply to (REDIS_URL, or the first entry of REDIS_CLUSTER_NODES / REDIS_SENTINELS, is redis://)',
    });
  }
  if (problems.length > 0) return { problems };
  if (typeof endpoint === 'string') return { endpoint: { kind: 'node', url: endpoint, tlsOptions: tls }, problems };
  return { endpoint: { ...endpoint, tlsOptions: tls }, problems };
}

function isTls(endpoint: RedisEndpoint): boolean {
  if (typeof endpoint === 'string') return endpoint.startsWith('rediss://');
  return endpoint.kind === 'node' || endpoint.tls;
}
