// Errors the gateway itself produces, in the dialect's own error JSON shape so SDKs surface them
// as provider errors with a useful message.
import type { Dialect } from '@context-guru/components';
import { GATEWAY_ERRORS, type GatewayErrorCode } from './error-codes';
import { isUpstreamTimeout } from './upstream.client';

export interface GatewayErrorBody {
  status: number;
  body: string;
}

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  408: 'invalid_request_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'api_error',
};

/** Google's canonical status names (google.rpc.Code) for the statuses the gateway answers with. */
const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  408: 'DEADLINE_EXCEEDED',
  426: 'FAILED_PRECONDITION',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** The dialect a request outside every route is answered in: its path's (or `provider=` query's). */
export function dialectOfUrl(url: string): Dialect {
  const q = url.indexOf('?');
  if (url.startsWith('/anthropic/') || url === '/anthropic' || (q >= 0 && url.includes('provider=anthropic', q))) return 'anthropic';
  if (url.startsWith('/gemini/') || url === '/gemini' || (q >= 0 && url.includes('provider=gemini', q))) return 'gemini';
  // The cloud routes carry Anthropic Messages, and their clients parse Anthropic errors.
  if (url.startsWith('/bedrock/') || url.startsWith('/vertex/')) return 'anthropic';
  return 'openai';
}

/** Google's error JSON (`{error: {code, message, status, details}}`); our code as an ErrorInfo reason. */
function googleError(status: number, code: GatewayErrorCode, message: string): string {
  const details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: code, domain: 'context-guru' }];
  return JSON.stringify({
    error: { code: status, message: `context-guru: ${message}`, status: GOOGLE_STATUS[status] ?? 'UNKNOWN', details },
  });
}

/** The error body for `code`, with the status the code table gives it. */
export function gatewayError(dialect: Dialect, code: GatewayErrorCode, message: string): GatewayErrorBody {
  const status = GATEWAY_ERRORS[code].status;
  if (dialect === 'anthropic') {
    const type = ANTHROPIC_TYPES[status] ?? 'api_error';
    return { status, body: JSON.stringify({ type: 'error', error: { type, message: `context-guru: ${message}` } }) };
  }
  if (dialect === 'gemini') return { status, body: googleError(status, code, message) };
  return {
    status,
    body: JSON.stringify({
      error: { message: `context-guru: ${message}`, type: status >= 500 ? 'server_error' : 'invalid_request_error', code },
    }),
  };
}

/** What ends a stream still open when the shutdown's drain deadline passes. */
export class DrainDeadline extends Error {
  constructor(readonly deadlineMs: number) {
    super(`drain deadline of ${deadlineMs} ms passed`);
    this.name = 'DrainDeadline';
  }
}

/**
 * The last event of a stream whose upstream failed after the client got its headers: Anthropic's
 * `event: error`, OpenAI's `data: {"error": …}`, each as the SDKs parse them. The leading blank
 * line ends any event the upstream left half-written.
 */
export function streamErrorEvent(dialect: Dialect, err: unknown, idleMs: number): Buffer {
  const timeout = isUpstreamTimeout(err);
  const e =
    err instanceof DrainDeadline
      ? gatewayError(dialect, 'gateway_draining', `the gateway is shutting down: stream ended after ${err.deadlineMs} ms of draining`)
      : gatewayError(
          dialect,
          timeout ? 'upstream_idle_timeout' : 'upstream_stream_failed',
          timeout ? `upstream sent nothing for ${idleMs} ms` : 'upstream stream failed',
        );
  if (dialect === 'responses') {
    // The Responses stream's own `error` event (type, code, message); `error` keeps the SDKs' shape.
    const { error } = JSON.parse(e.body) as { error: { code: string; message: string } };
    const data = JSON.stringify({ type: 'error', code: error.code, message: error.message, param: null, error });
    return Buffer.from(`\n\nevent: error\ndata: ${data}\n\n`);
  }
  return Buffer.from(dialect === 'anthropic' ? `\n\nevent: error\ndata: ${e.body}\n\n` : `\n\ndata: ${e.body}\n\n`);
}
