// What the hot store makes of Redis's answers and its connection: a failure to answer becomes
// `store_unavailable`, a stored turn record is read defensively, and start-up waits for `ready`.
import type { TurnRecord } from '@context-guru/components';
import { StorageError } from '../storage-errors';
import { errorText } from '../storage-logger';
import { tlsRefusal } from '../tls-files';
import type { RedisClient } from './redis-connection';

export function unavailable(err: unknown): StorageError {
  return new StorageError('store_unavailable', `redis did not answer: ${errorText(err)}`, { cause: err });
}

/**
 * Error replies that say the node cannot serve now, not that a command is wrong: a replica after a
 * failover (READONLY), a cluster without a primary for the slot (CLUSTERDOWN), a slot mid-move
 * (TRYAGAIN), a node still loading its data (LOADING), a replica whose primary is gone (MASTERDOWN).
 */
export function unavailableReply(err: unknown): boolean {
  return err instanceof Error && /^(READONLY|CLUSTERDOWN|TRYAGAIN|LOADING|MASTERDOWN)\b/.test(err.message);
}

export function parseTurn(raw: string): TurnRecord | null {
  const [n, at, ttlMs] = raw.split(',').map(Number);
  if (!finite(n) || !finite(at) || !finite(ttlMs)) return null;
  return { n, at, ttlMs };
}

/** A field of a stored turn that is there and a number (a short or garbled record has neither). */
function finite(x: number | undefined): x is number {
  return x !== undefined && Number.isFinite(x);
}

export function waitReady(redis: RedisClient, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let last: unknown;
    const give = (err: StorageError) => {
      clearTimeout(timer);
      redis.off('error', onError);
      redis.disconnect();
      reject(err);
    };
    // A certificate the CA does not verify (or a server that speaks no TLS) stays so on retry: the
    // boot fails on it at once, saying so, instead of waiting out the timer.
    const onError = (err: unknown) => {
      last = err;
      const refused = tlsRefusal(err);
      if (refused)
        give(
          new StorageError('store_unavailable', `redis TLS refused: ${refused} (REDIS_TLS_CA_FILE names the CA to trust)`, { cause: err }),
        );
    };
    const timer = setTimeout(() => {
      const why = last === undefined ? '' : ` (last error: ${errorText(last)})`;
      give(new StorageError('store_unavailable', `redis not ready after ${timeoutMs} ms${why}`, { cause: last }));
    }, timeoutMs);
    redis.on('error', onError);
    redis.once('ready', () => {
      clearTimeout(timer);
      redis.off('error', onError);
      resolve();
    });
    // The first attempt may fail; retryStrategy keeps trying until the timer gives up.
    redis.connect().catch(() => undefined);
  });
}
