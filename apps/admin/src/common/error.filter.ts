// Every failure leaves the admin API in the one error shape. Nest's and Fastify's own errors (an
// unknown route, a body that is not JSON, a body over the limit) are mapped onto the same table.
import { ArgumentsHost, Catch, HttpException, type ExceptionFilter } from '@nestjs/common';
import { isStoreUnavailable } from '@context-guru/storage';
import type { FastifyReply } from 'fastify';
import { ADMIN_ERRORS, AdminError, type AdminErrorCode } from './admin-errors';

const BY_STATUS: Record<number, AdminErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'invalid_request',
  429: 'rate_limited',
};

function toAdminError(err: unknown): AdminError {
  if (err instanceof AdminError) return err;
  const status = err instanceof HttpException ? err.getStatus() : (err as { statusCode?: unknown })?.statusCode;
  const code = typeof status === 'number' ? BY_STATUS[status] : undefined;
  if (code) return new AdminError(code, err instanceof Error ? err.message : String(err));
  if (isStoreUnavailable(err)) return new AdminError('store_unavailable', 'the database did not answer');
  return new AdminError('internal', 'internal error');
}

function sendAdminError(reply: FastifyReply, err: AdminError): void {
  void reply
    .code(ADMIN_ERRORS[err.code].status)
    .header('content-type', 'application/json')
    .send({ error: { code: err.code, message: err.message } });
}

@Catch()
export class AdminErrorFilter implements ExceptionFilter {
  constructor(private readonly onInternal: (err: unknown) => void) {}

  catch(err: unknown, host: ArgumentsHost): void {
    const mapped = toAdminError(err);
    if (mapped.code === 'internal' || mapped.code === 'store_unavailable') this.onInternal(err);
    sendAdminError(host.switchToHttp().getResponse<FastifyReply>(), mapped);
  }
}
