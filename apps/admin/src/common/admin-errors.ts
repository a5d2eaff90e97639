// The one table of admin error codes: every error the admin API answers is
// `{"error": {"code", "message"}}` with a code from here and its status. docs/admin-api.md lists
// the same codes (an anti-drift test reads both).
export const ADMIN_ERRORS = {
  invalid_request: {
    status: 400,
    meaning: 'the body, a path or a query parameter does not match its schema (the message names the field)',
  },
  unauthorized: {
    status: 401,
    meaning:
      'no bearer token, or one that is neither ADMIN_TOKEN nor a live admin key: unknown, revoked and wrong credentials get the one message',
  },
  forbidden: { status: 403, meaning: "the key's role does not allow this route" },
  not_found: { status: 404, meaning: 'no such route, tenant, key, version, filter set or stashed original (for this tenant)' },
  conflict: { status: 409, meaning: 'the resource already exists (tenant id)' },
  payload_too_large: { status: 413, meaning: 'the body is over the admin body limit (ADMIN_BODY_LIMIT_BYTES, 8 MiB)' },
  invalid_document: { status: 422, meaning: 'a pipeline document that does not build; the message names the key; nothing is stored' },
  invalid_filter: {
    status: 422,
    meaning: 'a filter set that does not load (DSL error or failing inline test); the message names the line; nothing is stored',
  },
  rate_limited: { status: 429, meaning: 'too many ops expands by this actor in the last minute' },
  auth_throttled: {
    status: 429,
    meaning: 'ADMIN_AUTH_FAILURES_PER_MINUTE failed attempts from this address: every attempt waits (the message gives the seconds)',
  },
  stats_unavailable: {
    status: 501,
    meaning:
      "this admin runs apart from the gateway: read each replica's /stats or the dashboards (GET /v1/stats and /ui/ are the embedded process's)",
  },
  internal: { status: 500, meaning: 'an unexpected failure (logged); nothing half-done is committed' },
  store_unavailable: { status: 503, meaning: 'the database or the stash store did not answer' },
} as const;

export type AdminErrorCode = keyof typeof ADMIN_ERRORS;

export class AdminError extends Error {
  constructor(
    readonly code: AdminErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AdminError';
  }

  get status(): number {
    return ADMIN_ERRORS[this.code].status;
  }
}

export const notFound = (what: string): AdminError => new AdminError('not_found', `${what} not found`);
