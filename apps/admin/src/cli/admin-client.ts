// The HTTP client the CLI speaks through: bearer from ADMIN_TOKEN, base from ADMIN_URL, and the
// API's error shape turned into one thrown CliError ("code: message").
export class CliError extends Error {
  constructor(
    message: string,
    readonly code = 'cli',
  ) {
    super(message);
  }
}

export class AdminClient {
  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.base.replace(/\/+$/, '')}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new CliError(`cannot reach the admin API at ${this.base}: ${err instanceof Error ? err.message : String(err)}`, 'unreachable');
    }
    const text = await res.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON
    }
    if (!res.ok) {
      const e = (json as { error?: { code?: string; message?: string } })?.error;
      throw new CliError(e?.message ?? `HTTP ${res.status}: ${text.slice(0, 200)}`, e?.code ?? String(res.status));
    }
    return json as T;
  }
}
