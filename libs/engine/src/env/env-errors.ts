// The one table of boot-time environment codes. Every variable the gateway (or the embedded
// process, which parses the same environment, or the standalone admin) refuses to start with is one EnvProblem with a code
// from here, naming the variable, its value and what it accepts; all of them are reported at once.
// docs/errors.md lists the same codes, and a test boots the gateway with a bad value of each.
/**
 * Each code and what it means, as docs/errors.md lists them.
 * @internal exported for tests (the anti-drift test compares it with the page)
 */
export const ENV_ERRORS = {
  invalid_integer: {
    meaning:
      'not a whole number in the range the variable takes (PORT, ADMIN_PORT, BODY_LIMIT_BYTES, ADMIN_BODY_LIMIT_BYTES, the UPSTREAM_*_TIMEOUT_MS, …); the message gives the range',
  },
  invalid_choice: {
    meaning:
      'not one of the values the variable takes (CG_ROLE, INJECT_EXPAND, CACHE_MODE, LOG_LEVEL, HOT_STORE, …); the message lists them',
  },
  invalid_url: {
    meaning:
      'not a URL (REDIS_URL, DATABASE_URL; for the standalone admin a redis(s):// and a postgres(ql):// one), not a postgres(ql):// one (MIGRATION_DATABASE_URL), or not an http(s) one (OPENAI_UPSTREAM, ANTHROPIC_UPSTREAM, CHEAP_MODEL_BASE)',
  },
  invalid_redis_topology: {
    meaning:
      'REDIS_CLUSTER_NODES or REDIS_SENTINELS is not a host:port list, REDIS_SENTINELS is set without REDIS_SENTINEL_MASTER, or more than one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS is set',
  },
  invalid_tls: {
    meaning:
      'a CA, certificate or key file (REDIS_TLS_CA_FILE, REDIS_TLS_CERT_FILE, REDIS_TLS_KEY_FILE, PGSSLROOTCERT, PGSSLCERT, PGSSLKEY, or sslrootcert / sslcert / sslkey in DATABASE_URL or MIGRATION_DATABASE_URL) is missing, unreadable or not PEM; a certificate comes without its key; Redis TLS files are given for a redis:// endpoint; or an sslmode node-pg does not know',
  },
  invalid_duration: {
    meaning:
      'CONTEXT_GURU_LLM_TIMEOUT or CONTEXT_GURU_SUMMARIZE_TIMEOUT is not a positive duration like 90s, 1m30s, 1500ms or bare seconds',
  },
  invalid_price_table: {
    meaning: 'PRICE_TABLE (a file or the document) is not YAML or JSON, or not a price document; the message gives the first wrong path',
  },
  weak_secret: {
    meaning:
      'a token the process compares callers against (OPS_TOKEN, ADMIN_TOKEN) is shorter than its minimum (ADMIN_TOKEN_MIN_LENGTH for ADMIN_TOKEN) or has fewer than 8 different characters; the message gives its length, never its value',
  },
} as const;

export type EnvErrorCode = keyof typeof ENV_ERRORS;

export interface EnvProblem {
  code: EnvErrorCode;
  variable: string;
  /** `VAR="value": expected …`: the variable, what it was and what it accepts. */
  message: string;
}

/** One bad variable: `expected` says what the variable accepts. */
export function envProblem(code: EnvErrorCode, variable: string, value: string, expected: string): EnvProblem {
  return { code, variable, message: `${variable}=${JSON.stringify(value)}: expected ${expected}` };
}

/** Every problem of one environment, one line each (`code: VAR="value": expected …`). */
export class EnvError extends Error {
  constructor(readonly problems: readonly EnvProblem[]) {
    super(`invalid environment:\n  - ${problems.map((p) => `${p.code}: ${p.message}`).join('\n  - ')}`);
    this.name = 'EnvError';
  }
}
