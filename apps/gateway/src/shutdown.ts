// One shutdown path for a process entry: the first SIGTERM/SIGINT closes everything once, then exits.
import type { Logger } from './observability/logger';

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
