// The process-wide cap on compaction-model calls in flight: a burst of requests can never turn
// into a burst of model calls. Waiting is bounded by the caller's signal (the per-call timeout).
import { types } from 'node:util';

/**
 * Why the wait ended, as an Error. An Error passes as it is, and so does AbortSignal.timeout's
 * TimeoutError, a DOMException: the model client classifies it by name. isNativeError also
 * recognises an Error made in another realm (jest's test context), where instanceof does not.
 */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof DOMException || reason instanceof Error || types.isNativeError(reason)) return reason;
  return new Error(`aborted: ${String(reason)}`, { cause: reason });
}

export class ConcurrencyLimiter {
  private active = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  /** `limit` 0 means unlimited. */
  constructor(private readonly limit: number) {}

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves with a release function once a slot is free; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.limit === 0 || this.active < this.limit) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.active++;
          resolve(this.releaser());
        },
      };
      // Only a given signal can abort, so the listener is bound to it.
      const abortOn = (s: AbortSignal) => () => {
        const at = this.waiting.indexOf(entry);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(abortError(s));
      };
      const onAbort = signal ? abortOn(signal) : () => undefined;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active--;
      this.waiting.shift()?.grant();
    };
  }
}
