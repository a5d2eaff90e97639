// A credential fetched from a token service, kept until shortly before it expires and refreshed
// by one fetch however many requests ask at once. A failed fetch is not kept: the next request
// tries again.
import { request } from 'undici';

/** A credential the gateway could not obtain: the request is answered with the reason. */
export class CloudCredentialsError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'CloudCredentialsError';
  }
}

/** Refreshed this long before the expiry the service gave (clock skew, a slow request). */
const EARLY_MS = 5 * 60_000;

export class TokenCache<T> {
  private value: { v: T; until: number } | null = null;
  private pending: Promise<T> | null = null;

  constructor(
    private readonly fetch: () => Promise<{ value: T; expiresAt: number }>,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<T> {
    if (this.value && this.now() < this.value.until) return Promise.resolve(this.value.v);
    this.pending ??= this.fetch()
      .then(({ value, expiresAt }) => {
        this.value = { v: value, until: Math.max(this.now(), expiresAt - EARLY_MS) };
        return value;
      })
      .finally(() => (this.pending = null));
    return this.pending;
  }
}

/** A token service's answer, with a bound on waiting for it; the error names the service, never a secret. */
export async function fetchText(
  what: string,
  url: string,
  init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
): Promise<string> {
  let res;
  try {
    res = await request(url, { ...init, headersTimeout: 10_000, bodyTimeout: 10_000 });
  } catch (err) {
    throw new CloudCredentialsError(`${what} could not be reached`, err);
  }
  const text = await res.body.text();
  if (res.statusCode < 200 || res.statusCode >= 300) throw new CloudCredentialsError(`${what} answered ${res.statusCode}`);
  return text;
}
