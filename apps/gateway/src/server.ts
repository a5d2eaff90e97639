// Builds the gateway HTTP server: Nest on Fastify for wiring, lifecycle and the ops routes; the
// proxy routes are plain handlers on the same node:http server (see proxy/hot-http.ts), which get
// the raw body Buffer (never a parsed object) so the forwarded bytes are spliced, not re-serialized.
import 'reflect-metadata';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { expandHandler } from './proxy/expand.route';
import type { GatewayContext } from './gateway-context';
import { GatewayModule } from './gateway.module';
import { chatHandler } from './proxy/chat.route';
import { compactHandler } from './proxy/compact.route';
import { hotServer, OpenStreams } from './http/hot-http';
import { type Logger, errorText } from '@context-guru/engine';
import { drain } from './shutdown';
import { RouteNotFoundFilter } from './ops/route-not-found.filter';
import { openaiPassthroughHandler } from './proxy/openai-passthrough.route';
import { geminiHandler } from './proxy/gemini.route';
import { cloudChatHandler } from './proxy/cloud.route';
import { BEDROCK_PREFIX, VERTEX_PREFIX } from './cloud/cloud-path';

/**
 * Connections the kernel may hold for the gateway before it accepts them (node's default is 511,
 * the cap is net.core.somaxconn). A burst arriving while the loop is busy outgrows 511: the
 * kernel then drops handshakes (ListenOverflows) and some of those clients' connections are
 * reset — the overload bench's ECONNRESETs, which the bare proxy, accepting at once, never had.
 */
const LISTEN_BACKLOG = 4096;

/** Listens on `host`:`port` with room for a burst's connections (LISTEN_BACKLOG). */
export function listenGateway(app: NestFastifyApplication, port: number, host: string): Promise<unknown> {
  return app.listen({ port, host, backlog: LISTEN_BACKLOG });
}

export async function createGatewayServer(gw: GatewayContext): Promise<NestFastifyApplication> {
  const open = new OpenStreams();
  const hot = hotServer(
    [
      { method: 'POST', path: '/openai/v1/chat/completions', dialect: 'openai', handler: chatHandler(gw, 'openai'), lazyBody: true },
      { method: 'POST', path: '/anthropic/v1/messages', dialect: 'anthropic', handler: chatHandler(gw, 'anthropic'), lazyBody: true },
      { method: 'POST', path: '/openai/v1/responses', dialect: 'responses', handler: chatHandler(gw, 'responses'), lazyBody: true },
      ...(['GET', 'POST', 'DELETE'] as const).map((method) => ({
        method,
        path: '/openai/v1/',
        prefix: true,
        dialect: 'responses' as const,
        handler: openaiPassthroughHandler(gw),
      })),
      // Gemini's model and method are in the path: one prefix route, which tells calls from the rest.
      ...(['GET', 'POST', 'DELETE', 'PATCH'] as const).map((method) => ({
        method,
        path: '/gemini/',
        prefix: true,
        dialect: 'gemini' as const,
        handler: geminiHandler(gw),
        lazyBody: true,
      })),
      // The model is in the path (a prefix route), the body is Anthropic Messages (docs/bedrock-vertex.md).
      {
        method: 'POST',
        path: BEDROCK_PREFIX,
        prefix: true,
        dialect: 'anthropic',
        handler: cloudChatHandler(gw, 'bedrock'),
        lazyBody: true,
      },
      { method: 'POST', path: VERTEX_PREFIX, prefix: true, dialect: 'anthropic', handler: cloudChatHandler(gw, 'vertex'), lazyBody: true },
      { method: 'POST', path: '/compact', dialect: 'openai', handler: compactHandler(gw), lazyBody: true },
      { method: 'GET', path: '/expand', dialect: 'openai', handler: expandHandler(gw) },
    ],
    { limit: gw.env.bodyLimitBytes, timeoutMs: gw.env.bodyReadTimeoutMs, discardBytes: gw.env.bodyDiscardBytes },
    // The query may carry a provider key (Gemini's `?key=`): only the path is logged.
    (err, url) => gw.log.error('unhandled route error', { error: errorText(err), url: url.split('?', 1)[0] }),
    open,
  );
  const adapter = new FastifyAdapter({
    logger: false,
    serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void) => gw.compression.load.watch(hot(handler)),
  });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(gw), adapter, {
    bodyParser: false,
    logger: gw.env.logLevel === 'debug' ? ['log', 'warn', 'error', 'debug'] : ['warn', 'error'],
  });
  app.useGlobalFilters(new RouteNotFoundFilter());
  await app.init();
  openStreams.set(app, open);
  return app;
}

const openStreams = new WeakMap<NestFastifyApplication, OpenStreams>();

/** SIGTERM's first step (see shutdown.ts): stop accepting, let streams run until the deadline, end the rest. */
export function drainGateway(app: NestFastifyApplication, deadlineMs: number, log: Logger): Promise<void> {
  const server = app.getHttpServer() as Server;
  return drain(server, openStreams.get(app) ?? new OpenStreams(), deadlineMs, log);
}
