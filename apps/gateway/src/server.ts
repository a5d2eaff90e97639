// Builds the gateway HTTP server: Nest for wiring, lifecycle and the ops routes; plain Fastify
// handlers for the hot path, which receive the raw body Buffer (never a parsed object) so the
// forwarded bytes can be spliced, not re-serialized.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { expandHandler } from './expand/expand.route';
import type { GatewayContext } from './gateway-context';
import { GatewayModule } from './gateway.module';
import { chatHandler } from './proxy/chat.route';
import { compactHandler } from './proxy/compact.route';
import { gatewayError } from './proxy/gateway-errors';
import type { Dialect } from './wire/wire.types';

export async function createGatewayServer(gw: GatewayContext): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({ bodyLimit: gw.env.bodyLimitBytes, logger: false });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(gw), adapter, {
    bodyParser: false,
    logger: gw.env.logLevel === 'debug' ? ['log', 'warn', 'error', 'debug'] : ['warn', 'error'],
  });
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  // The hot path lives in its own encapsulated scope: its own raw-body parser and error shapes,
  // untouched by Nest's handlers for the ops routes.
  await fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: gw.env.bodyLimitBytes }, (_req, body, done) => done(null, body));
    scope.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
      const dialect: Dialect = req.url.startsWith('/anthropic') || /provider=anthropic/.test(req.url) ? 'anthropic' : 'openai';
      const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
      const message =
        err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? `request body is over the ${gw.env.bodyLimitBytes} byte limit`
          : status >= 500
            ? 'internal error'
            : err.message;
      if (status >= 500) gw.log.error('unhandled route error', { error: err.message, url: req.url });
      const e = gatewayError(dialect, status, err.code ?? 'error', message);
      reply.code(e.status).header('content-type', 'application/json').send(e.body);
    });
    scope.post('/openai/v1/chat/completions', chatHandler(gw, 'openai'));
    scope.post('/anthropic/v1/messages', chatHandler(gw, 'anthropic'));
    scope.post('/compact', compactHandler(gw));
    scope.get('/expand', expandHandler(gw));
  });
  await app.init();
  return app;
}
