// A loopback TCP proxy in front of a real service, so a test can cut one process's connection
// (refuse new ones, reset open ones) and restore it, or stall it (connections stay open and
// nothing is relayed, as in a network partition or a hung server) and resume it, without
// stopping the shared server.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './replicas';

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  /** Open and new connections stay up, but no byte passes either way until resume(). */
  stall(): void;
  resume(): void;
  /** New connections go to `port` from now on (a DNS name flipped to a promoted node); open ones stay. */
  retarget(port: number): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
}

/** Relays both ways; a stalled pair is unpiped and paused, so bytes wait in the kernel buffers. */
function relay(p: Pair, on: boolean): void {
  if (on) {
    p.client.pipe(p.upstream);
    p.upstream.pipe(p.client);
    return;
  }
  p.client.unpipe(p.upstream);
  p.upstream.unpipe(p.client);
  p.client.pause();
  p.upstream.pause();
}

export async function startTcpProxy(targetHost: string, firstPort: number): Promise<TcpProxy> {
  let targetPort = firstPort;
  const port = await freePort();
  const pairs = new Set<Pair>();
  let server: Server | undefined;
  let stalled = false;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const pair = { client, upstream: connect(targetPort, targetHost) };
        pairs.add(pair);
        const drop = () => {
          client.destroy();
          pair.upstream.destroy();
          pairs.delete(pair);
        };
        client.on('error', drop).on('close', drop);
        pair.upstream.on('error', drop).on('close', drop);
        relay(pair, !stalled);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
      server = s;
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  const setStalled = (on: boolean) => {
    if (stalled === on) return;
    stalled = on;
    for (const p of pairs) relay(p, !on);
  };
  await listen();
  // Restoring a proxy that is not cut is a no-op, so a test's cleanup may always restore.
  return {
    port,
    cut: stop,
    restore: () => (server ? Promise.resolve() : listen()),
    stall: () => setStalled(true),
    resume: () => setStalled(false),
    retarget: (p) => (targetPort = p),
    close: stop,
  };
}
