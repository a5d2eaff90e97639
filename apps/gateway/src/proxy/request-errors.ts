// Maps failures before forwarding (tenant auth, undecodable body) to precise dialect errors.
import type { HotReply } from './hot-http';
import { TenantAuthError } from '../tenancy/tenant-resolver';
import { WireError, type Dialect } from '../wire/wire.types';
import { gatewayError } from './gateway-errors';

export function decodeFailure(reply: HotReply, dialect: Dialect, err: unknown): void {
  let e;
  if (err instanceof WireError) e = gatewayError(dialect, err.status, err.code, err.message);
  else if (err instanceof TenantAuthError) e = gatewayError(dialect, err.status, 'tenant_auth', err.message);
  else e = gatewayError(dialect, 500, 'internal_error', 'internal error');
  reply.code(e.status).header('content-type', 'application/json').send(e.body);
}
