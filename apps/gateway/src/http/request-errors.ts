// Maps failures before forwarding (tenant auth, undecodable body) to precise dialect errors.
import type { HotReply } from './hot-http';
import type { Dialect } from '@context-guru/components';
import { WireError } from '@context-guru/engine';
import { GatewayError } from './error-codes';
import { gatewayError, type GatewayErrorBody } from './gateway-errors';

/** A failure that carries its code is answered with it; anything else is an internal error. */
export function failureError(dialect: Dialect, err: unknown): GatewayErrorBody {
  if (err instanceof GatewayError || err instanceof WireError) return gatewayError(dialect, err.code, err.message);
  return gatewayError(dialect, 'internal_error', 'internal error');
}

export function decodeFailure(reply: HotReply, dialect: Dialect, err: unknown): void {
  sendError(reply, failureError(dialect, err));
}

/** A gateway error answered as JSON in the dialect's shape. */
export function sendError(reply: HotReply, e: GatewayErrorBody): HotReply {
  return reply.code(e.status).header('content-type', 'application/json').send(e.body);
}
