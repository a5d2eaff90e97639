// How one process reads its environment: each reader returns the variable's value (or the default
// when it is unset or bad) and appends a coded EnvProblem for a bad value, so the caller reports
// every problem at once. The gateway, its model environment and the standalone admin all read
// through these, so a variable means the same and is refused the same way wherever it is read.
// A value is trimmed first, and a blank one is unset: a trailing newline from a mounted secret or a
// padded .env line is not a different value (Number and the URL parser ignored it already, but the
// URL was then used with it, and a choice was refused), and a blank PORT is not port 0.
import { postgresTls, redisEndpointFrom, withRedisTls, type RedisEndpoint } from '@context-guru/storage';
import { envProblem, type EnvProblem } from './env-errors';

type Source = Record<string, string | undefined>;

/** Different characters a secret must have besides its length. */
const SECRET_DISTINCT_CHARS = 8;

/** What a URL variable accepts beyond parsing: its schemes (`http:`) and how the message says so. */
export interface UrlKind {
  protocols: readonly string[];
  expected: string;
}

export const HTTP_URL: UrlKind = { protocols: ['http:', 'https:'], expected: 'an http(s) URL' };
export const POSTGRES_URL: UrlKind = { protocols: ['postgres:', 'postgresql:'], expected: 'a postgres:// or postgresql:// URL' };

export interface EnvReaders {
  /** The value, trimmed; undefined when unset or blank. */
  text(key: string): string | undefined;
  /** A whole number in [min, max]. */
  int(key: string, def: number, min?: number, max?: number): number;
  /** A value from a fixed set. */
  oneOf<T extends string, D extends T | undefined>(key: string, allowed: readonly T[], def: D): T | D;
  /** A URL (of `kind` when given), without trailing slashes; typed by its default: with one, always set. */
  url<D extends string | undefined>(key: string, def: D, kind?: UrlKind): string | D;
  /** A token at least `minLength` characters long (one that is guessable protects nothing); undefined when unset. */
  secret(key: string, minLength: number): string | undefined;
  /** REDIS_URL (of `kind` when given), REDIS_CLUSTER_NODES or REDIS_SENTINELS + REDIS_SENTINEL_MASTER: one topology. */
  redis(kind?: UrlKind): RedisEndpoint | undefined;
  /**
   * A Postgres URL (of `kind` when given) with libpq's PGSSLROOTCERT, PGSSLCERT, PGSSLKEY and
   * PGSSLMODE folded in where it has no such parameter; its TLS files checked readable.
   */
  postgres(key: string, kind?: UrlKind): string | undefined;
}

export function envReaders(src: Source, problems: EnvProblem[]): EnvReaders {
  const text = (key: string): string | undefined => src[key]?.trim() || undefined;
  const int = (key: string, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number => {
    const v = text(key);
    if (v === undefined) return def;
    const n = Number(v);
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${min}` : `an integer between ${min} and ${max}`;
    problems.push(envProblem('invalid_integer', key, v, range));
    return def;
  };
  const oneOf = <T extends string, D extends T | undefined>(key: string, allowed: readonly T[], def: D): T | D => {
    const v = text(key);
    if (v === undefined) return def;
    const found = allowed.find((a) => a === v);
    if (found === undefined) problems.push(envProblem('invalid_choice', key, v, `one of ${allowed.join(', ')}`));
    return found ?? def;
  };
  const url = <D extends string | undefined>(key: string, def: D, kind?: UrlKind): string | D => {
    const v = text(key) ?? def;
    if (v === undefined) return def;
    if (URL.canParse(v) && (!kind || kind.protocols.includes(new URL(v).protocol))) return v.replace(/\/+$/, '');
    problems.push(envProblem('invalid_url', key, v, kind?.expected ?? 'a URL'));
    return def;
  };
  const secret = (key: string, minLength: number): string | undefined => {
    const v = text(key);
    // Long but made of few characters (`aaaa…`, `1212…`) is no harder to guess than short.
    const distinct = v === undefined ? 0 : new Set(v).size;
    if (v === undefined || (v.length >= minLength && distinct >= SECRET_DISTINCT_CHARS)) return v;
    // The value is a secret: the message says how long it was, never what it was.
    problems.push({
      code: 'weak_secret',
      variable: key,
      message: `${key} (${v.length} characters, ${distinct} different): expected at least ${minLength} characters, ${SECRET_DISTINCT_CHARS} of them different`,
    });
    return undefined;
  };
  const redis = (kind?: UrlKind): RedisEndpoint | undefined => {
    const single = url('REDIS_URL', undefined, kind);
    const { endpoint, problem } = redisEndpointFrom({
      url: single,
      clusterNodes: text('REDIS_CLUSTER_NODES'),
      sentinels: text('REDIS_SENTINELS'),
      sentinelMaster: text('REDIS_SENTINEL_MASTER'),
      sentinelPassword: text('REDIS_SENTINEL_PASSWORD'),
    });
    if (problem) problems.push(envProblem('invalid_redis_topology', problem.variable, problem.value, problem.expected));
    const tls = withRedisTls(endpoint, {
      caFile: text('REDIS_TLS_CA_FILE'),
      certFile: text('REDIS_TLS_CERT_FILE'),
      keyFile: text('REDIS_TLS_KEY_FILE'),
    });
    for (const p of tls.problems) problems.push(envProblem('invalid_tls', p.variable, p.value, p.expected));
    return tls.endpoint;
  };
  const postgres = (key: string, kind?: UrlKind): string | undefined => {
    const given = url(key, undefined, kind);
    const env = { rootCert: text('PGSSLROOTCERT'), cert: text('PGSSLCERT'), key: text('PGSSLKEY'), mode: text('PGSSLMODE') };
    const tls = postgresTls(given, env, key);
    for (const p of tls.problems) {
      const problem = envProblem('invalid_tls', p.variable, p.value, p.expected);
      // PGSSL* fill every Postgres URL (DATABASE_URL, MIGRATION_DATABASE_URL): one bad file is one problem.
      if (!problems.some((q) => q.code === problem.code && q.message === problem.message)) problems.push(problem);
    }
    return tls.url;
  };
  return { text, int, oneOf, url, secret, redis, postgres };
}
