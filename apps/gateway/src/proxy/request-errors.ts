// Maps failures before forwarding (tenant auth, undecodable body) to precise dialect errors.
import type { HotReply } from './hot-http';
import { TenantAuthError } from '../tenancy/tenant-resolver';
import { WireError, type Dialect } from '../wire/wire.types';
import { gatewayError, type GatewayErrorBody } from './gateway-errors';

export function failureError(dialect: Dialect, err: unknown): GatewayErrorBody {
  if (err instanceof WireError) return gatewayError(dialect, err.status, err.code, err.message);
  if (err instanceof TenantAuthError) return gatewayError(dialect, err.status, 'tenant_auth', err.message);
  return gatewayError(dialect, 500, 'internal_error', 'internal error');
}

export function decodeFailure(reply: HotReply, dialect: Dialect, err: unknown): void {
  sendError(reply, failureError(dialect, err));
}

/** A gateway error answered as JSON in the dialect's shape. */
export function sendError(reply: HotReply, e: GatewayErrorBody): HotReply {
  return reply.code(e.status).header('content-type', 'application/json').send(e.body);
}
