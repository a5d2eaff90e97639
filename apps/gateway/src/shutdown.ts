// One shutdown path for a process entry: the first SIGTERM/SIGINT closes everything once, then exits.
// The gateway drains first: it stops accepting, lets open streams run until DRAIN_DEADLINE_MS,
// then ends each with the dialect's error event; the caller's close then flushes the write-behind
// queue. All of it stays inside the pod's grace period, so SIGKILL never cuts a stream mid-event.
import type { Server } from 'node:http';
import { type Logger } from '@context-guru/engine';
import { DrainDeadline } from './http/gateway-errors';
import type { OpenStreams } from './http/hot-http';

export function closeOnSignal(log: Logger, close: () => Promise<void>): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    await close().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** After the deadline: how long the error events get to reach their clients before sockets are cut. */
const TAIL_FLUSH_MS = 1000;
const IDLE_SWEEP_MS = 50;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Stops accepting and waits for every connection to end, at most `deadlineMs`; then ends each open
 * stream with its error tail, gives those tails TAIL_FLUSH_MS, and cuts whatever is left (a request
 * still waiting on its provider). Idle keep-alive connections are closed as they turn idle.
 */
export async function drain(server: Server, open: OpenStreams, deadlineMs: number, log: Logger): Promise<void> {
  let done = false;
  const closed = new Promise<void>((resolve) => server.close(() => resolve())).finally(() => (done = true));
  const until = async (ms: number) => {
    const end = Date.now() + ms;
    while (!done && Date.now() < end) {
      server.closeIdleConnections();
      await Promise.race([closed, sleep(Math.min(IDLE_SWEEP_MS, Math.max(0, end - Date.now())))]);
    }
  };
  await until(deadlineMs);
  if (done) return;
  log.warn('drain deadline passed; ending open streams', { streams: open.size, deadlineMs });
  open.endAll(new DrainDeadline(deadlineMs));
  await until(TAIL_FLUSH_MS);
  if (!done) server.closeAllConnections();
  await closed;
}
