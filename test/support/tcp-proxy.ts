// A loopback TCP proxy in front of a real service, so a test can cut one process's connection
// (refuse new ones, reset open ones) and restore it, without stopping the shared server.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './replicas';

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const port = await freePort();
  const open = new Set<Socket>();
  let server: Server | undefined;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        open.add(client).add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          open.delete(client);
          open.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        client.pipe(upstream).pipe(client);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
      server = s;
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of open) s.destroy();
      open.clear();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await listen();
  // Restoring a proxy that is not cut is a no-op, so a test's cleanup may always restore.
  return { port, cut: stop, restore: () => (server ? Promise.resolve() : listen()), close: stop };
}
