// Process entry. CG_ROLE=all (default) serves the gateway and the admin placeholder in one
// process with embedded stores; CG_ROLE=gateway serves the gateway alone, for replicas.
import { createAdminServer } from '@context-guru/admin';
import { EnvError, parseEnv } from './env';
import { createGatewayContext } from './gateway-context';
import { createGatewayServer } from './server';

async function main(): Promise<void> {
  const env = parseEnv();
  const gw = await createGatewayContext(env);
  const closers: Array<() => Promise<void>> = [];
  if (env.role !== 'admin') {
    const app = await createGatewayServer(gw);
    await app.listen(env.port, env.host);
    closers.push(() => app.close());
    gw.log.info('gateway listening', { port: env.port, host: env.host });
  }
  if (env.role !== 'gateway') {
    const admin = await createAdminServer({ adminToken: env.adminToken });
    await admin.listen(env.adminPort, env.host);
    closers.push(() => admin.close());
    gw.log.info('admin listening', { port: env.adminPort, host: env.host });
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    gw.log.info('shutting down', { signal });
    for (const close of closers) await close().catch(() => undefined);
    await gw.close().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  if (err instanceof EnvError) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`context-guru failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
