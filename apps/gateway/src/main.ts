// The gateway process alone (`npm run start:gateway`, replicas). The embedded single process that
// also serves the admin is apps/embedded; the gateway imports no other app.
import { exitOnBootFailure, tuneHeap } from '@context-guru/engine';
import { parseEnv } from './env';
import { createGatewayContext } from './gateway-context';
import { createGatewayServer, drainGateway, listenGateway } from './server';
import { closeOnSignal } from './shutdown';

async function main(): Promise<void> {
  tuneHeap();
  const env = parseEnv();
  const gw = await createGatewayContext(env);
  const app = await createGatewayServer(gw);
  await listenGateway(app, env.port, env.host);
  gw.log.info('gateway listening', { port: env.port, host: env.host });
  closeOnSignal(gw.log, async () => {
    await drainGateway(app, env.drainDeadlineMs, gw.log);
    await app.close().catch(() => undefined);
    // Flushes the write-behind queue before the stores close.
    await gw.close();
  });
}

main().catch(exitOnBootFailure);
