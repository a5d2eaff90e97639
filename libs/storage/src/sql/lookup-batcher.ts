// Coalesces look-ups into batches: every look-up asked in the same tick, or while the previous
// batch is still in flight, goes out together as one statement. Under a burst of new sessions
// each request makes its own first-sight look-ups; one statement per request is where an embedded
// database (PGlite, on the event loop) spends its time — parsing, planning and the protocol
// round per statement — so N look-ups as one statement cost little more than one.
// A look-up alone still goes out at once (after the current microtasks), so a quiet gateway
// waits for nothing; a failed batch rejects every look-up in it with the batch's error, as each
// would have failed on its own.

import { InvariantError, itemAt } from '@context-guru/components';

interface Waiting<Q, R> {
  ask: Q;
  resolve(r: R): void;
  reject(err: unknown): void;
}

export interface LookupBatcherOptions {
  /** Look-ups per statement at most (bounds the parameter arrays and the answer). */
  maxBatch?: number;
  /** Statements in flight at once: 1 on a single-session database, a few on a pool. */
  maxInFlight?: number;
}

export class LookupBatcher<Q, R> {
  private pending: Array<Waiting<Q, R>> = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  /** `run` answers a batch of asks in their order (one answer per ask, never undefined). */
  constructor(
    private readonly run: (asks: readonly Q[]) => Promise<R[]>,
    o: LookupBatcherOptions = {},
  ) {
    this.maxBatch = Math.max(1, o.maxBatch ?? 256);
    this.maxInFlight = Math.max(1, o.maxInFlight ?? 1);
  }

  load(ask: Q): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ ask, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.pending.length === 0) return;
    this.scheduled = true;
    // A microtask, not setImmediate: look-ups asked by the same tick's callbacks join, and a lone
    // look-up waits for no I/O phase of the loop.
    queueMicrotask(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.inFlight < this.maxInFlight && this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      this.inFlight++;
      void this.answer(batch).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
  }

  private async answer(batch: Array<Waiting<Q, R>>): Promise<void> {
    let out: R[];
    try {
      out = await this.run(batch.map((w) => w.ask));
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    if (out.length !== batch.length) {
      const err = new InvariantError(`${out.length} answers to ${batch.length} look-ups`);
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => w.resolve(itemAt(out, i, 'look-up answer')));
  }
}
