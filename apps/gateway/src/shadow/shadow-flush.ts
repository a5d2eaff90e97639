// Adds this replica's shadow deltas to the shared store (shadow_tallies) every FLUSH_MS and once
// more on close, so GET /v1/tenants/{id}/shadow sums every replica. A failed write is logged once
// and its deltas are put back for the next flush; serving never waits on it.
import { shadowTalliesRepository, type SqlClient } from '@context-guru/storage';
import { errorText, type Logger } from '@context-guru/engine';
import type { ShadowLedger } from './shadow-ledger';

const FLUSH_MS = 2000;

export class ShadowFlush {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private failing = false;

  constructor(private readonly o: { sql: SqlClient; ledger: ShadowLedger; log: Logger; everyMs?: number }) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.o.everyMs ?? FLUSH_MS);
    this.timer.unref();
  }

  /** Writes what accumulated since the last flush (waits for one already in flight first). */
  async flush(): Promise<void> {
    while (this.inFlight) await this.inFlight;
    const deltas = this.o.ledger.drain();
    if (deltas.length === 0) return;
    this.inFlight = shadowTalliesRepository
      .add(this.o.sql, deltas)
      .then(() => {
        this.failing = false;
      })
      .catch((err: unknown) => {
        this.o.ledger.restore(deltas);
        if (!this.failing) this.o.log.warn('shadow tallies not written; kept for the next flush', { error: errorText(err) });
        this.failing = true;
      })
      .finally(() => (this.inFlight = undefined));
    await this.inFlight;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
