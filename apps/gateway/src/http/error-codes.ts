// The one table of gateway error codes: every error the gateway itself answers carries a code from
// here and the status the table gives it (OpenAI's shape names the code, Anthropic's has no field
// for it and carries the type that status maps to). docs/errors.md lists the same codes, and an e2e
// test makes a real request for each. `store_unavailable` and `internal_error` also name why a
// request failed open (cg_fail_open_total{reason}).
import type { FailOpenReason, WireErrorCode } from '@context-guru/engine';

export const GATEWAY_ERRORS = {
  malformed_json: { status: 400, meaning: 'the body is not JSON; the message gives the position, line and column' },
  too_deep: { status: 400, meaning: 'JSON nesting deeper than the gateway walks (the message gives the limit and the position)' },
  invalid_request: { status: 400, meaning: 'the body is not a JSON object, or its `messages` is not an array' },
  invalid_utf8: { status: 400, meaning: 'the body is not valid UTF-8; the message gives the offset of the first invalid byte' },
  invalid_query: { status: 400, meaning: '/compact: a query parameter out of its range (`cache` is auto, on or off)' },
  invalid_preset: { status: 400, meaning: '/compact: `preset` names no preset' },
  expand_bad_id: { status: 400, meaning: '/expand: the id is neither a HASH nor a whole <<cg:HASH>> marker' },
  tenant_auth: {
    status: 401,
    meaning: 'no tenant key where one is required, an unknown, revoked or disabled key, or two different keys in one request',
  },
  ops_auth: {
    status: 401,
    meaning:
      '/metrics: OPS_TOKEN is set and the request does not present it as `Authorization: Bearer <token>`, or it is unset and the gateway listens beyond loopback',
  },
  tenant_forbidden: { status: 403, meaning: "/stats: a tenant key asked for another tenant's figures" },
  compact_preset_forbidden: {
    status: 403,
    meaning: '/compact: `preset` was given but COMPACT_PRESET_OVERRIDE is not true (the operator runs the pipeline)',
  },
  expand_not_found: { status: 404, meaning: '/expand: expired, unknown, or not stashed by this session' },
  route_not_found: { status: 404, meaning: 'no route at that path on the client port (Anthropic shape under /anthropic/, else OpenAI)' },
  method_not_allowed: { status: 405, meaning: 'a proxy route asked with another method (`Allow` names the one it serves)' },
  request_timeout: {
    status: 408,
    meaning: 'the body did not arrive within BODY_READ_TIMEOUT_MS of its read starting (the connection is closed)',
  },
  websocket_unsupported: {
    status: 426,
    meaning:
      'a WebSocket upgrade on an /openai route (Codex tries one on GET /openai/v1/responses): the Responses API is served over HTTPS only',
  },
  request_too_large: {
    status: 413,
    meaning:
      'the body is over BODY_LIMIT_BYTES (one declared over it is answered before it is read, then drained up to BODY_DISCARD_BYTES)',
  },
  unsupported_media_type: { status: 415, meaning: 'a declared content type other than JSON (none declared is accepted)' },
  compact_rate_limited: {
    status: 429,
    meaning: "/compact: the tenant's COMPACT_PER_MINUTE calls are used up (Retry-After gives the seconds until the next)",
  },
  internal_error: {
    status: 500,
    meaning: 'an unexpected failure before forwarding (logged); after decoding the gateway fails open instead',
  },
  upstream_unreachable: {
    status: 502,
    meaning: 'the provider could not be reached (connection refused or reset); the upstream URL is not named',
  },
  upstream_credentials: {
    status: 502,
    meaning:
      'a Bedrock or Vertex route, and the gateway has no credentials for that cloud or could not obtain them (the message names what to set; docs/bedrock-vertex.md)',
  },
  upstream_bad_response: { status: 502, meaning: 'the provider answered 200 to a non-streaming request with a body that is not JSON' },
  upstream_stream_failed: {
    status: 502,
    meaning: 'the provider broke off a stream after the client had its headers (sent as the last stream event)',
  },
  store_unavailable: { status: 503, meaning: '/expand: the stash store did not answer' },
  gateway_draining: {
    status: 503,
    meaning: 'the gateway is shutting down and DRAIN_DEADLINE_MS passed before the stream ended (sent as the last stream event)',
  },
  upstream_timeout: { status: 504, meaning: 'no response headers from the provider within UPSTREAM_HEADER_TIMEOUT_MS' },
  upstream_idle_timeout: {
    status: 504,
    meaning: 'the provider sent nothing for UPSTREAM_IDLE_TIMEOUT_MS mid-stream (sent as the last stream event; upstream is cancelled)',
  },
} as const;

export type GatewayErrorCode = keyof typeof GATEWAY_ERRORS;

// The codes the engine hands back (a body it cannot decode, why it failed open) are rows of this
// table: this fails to compile when the engine names one the table lacks.
const _engineCodes: readonly GatewayErrorCode[] = [] as (WireErrorCode | FailOpenReason)[];

/** A failure that already knows the code it is answered with (decoding, tenant auth). */
export class GatewayError extends Error {
  constructor(
    readonly code: GatewayErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'GatewayError';
  }

  get status(): number {
    return GATEWAY_ERRORS[this.code].status;
  }
}
