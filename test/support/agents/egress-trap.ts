// Proof that an agent run stays on loopback: the CLIs get HTTP_PROXY/HTTPS_PROXY pointing here
// (NO_PROXY covers 127.0.0.1 and localhost, where the gateway and the fake provider listen), so any
// request to another host — telemetry, update checks, a model call past the base URL — lands in
// this recorder and is refused instead of leaving the machine.
import { createServer, type Server } from 'node:http';
import { listenLoopback } from './loopback-server';

export interface EgressTrap {
  url: string;
  /** Every attempt, as "CONNECT host:port" or "GET http://host/path". */
  attempts: string[];
  close(): Promise<void>;
}

export async function startEgressTrap(): Promise<EgressTrap> {
  const attempts: string[] = [];
  const server: Server = createServer((req, res) => {
    attempts.push(`${req.method} ${req.url}`);
    req.socket.on('error', () => undefined);
    res.writeHead(403, { 'content-type': 'text/plain' }).end('egress blocked by the e2e tier');
  });
  server.on('connect', (req, socket) => {
    attempts.push(`CONNECT ${req.url}`);
    // The client may reset the tunnel it was refused; that must not take the test process down.
    socket.on('error', () => undefined);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  return { ...(await listenLoopback(server)), attempts };
}
