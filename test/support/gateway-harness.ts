// Starts the real gateway in-process on an ephemeral port against a fake upstream.
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AddressInfo } from 'node:net';
import { parseEnv } from '../../apps/gateway/src/env';
import { createGatewayContext, type ContextOverrides, type GatewayContext } from '../../apps/gateway/src/gateway-context';
import { createLogger } from '../../libs/engine/src/logger';
import { createGatewayServer } from '../../apps/gateway/src/server';

export interface GatewayHarness {
  url: string;
  gw: GatewayContext;
  app: NestFastifyApplication;
  close(): Promise<void>;
}

export async function startGateway(
  upstreamUrl: string,
  env: Record<string, string> = {},
  overrides: Pick<ContextOverrides, 'clock' | 'store' | 'tracing' | 'shadowPressure'> = {},
): Promise<GatewayHarness> {
  const parsed = parseEnv({
    OPENAI_UPSTREAM: upstreamUrl,
    ANTHROPIC_UPSTREAM: upstreamUrl,
    GEMINI_UPSTREAM: upstreamUrl,
    PORT: '0',
    LOG_LEVEL: 'error',
    // Unit-speed default: memory only. Tests of the durable tier set DURABLE_STORE themselves.
    DURABLE_STORE: 'none',
    ...env,
  });
  const log = createLogger('error', () => undefined);
  const gw = await createGatewayContext(parsed, { ...overrides, log, store: overrides.store });
  const app: NestFastifyApplication = await createGatewayServer(gw);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    gw,
    app,
    async close() {
      await app.close();
      await gw.close();
    },
  };
}
