// Every 404 on the client port in the error shape of the dialect its path names: an SDK pointed at
// a wrong base URL then surfaces a provider-style "not found" with the path, not Nest's own JSON.
import { Catch, NotFoundException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { dialectOfUrl, gatewayError } from '../http/gateway-errors';

/** The path as named in the message, cut short: it is the client's text. */
const SHOWN_PATH_CHARS = 200;

@Catch(NotFoundException)
export class RouteNotFoundFilter implements ExceptionFilter {
  catch(_err: NotFoundException, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const url = req.url;
    const path = url.split('?', 1)[0] ?? '/';
    const e = gatewayError(dialectOfUrl(url), 'route_not_found', `no route for ${req.method} ${path.slice(0, SHOWN_PATH_CHARS)}`);
    void reply.code(e.status).header('content-type', 'application/json').send(e.body);
  }
}
