// Whether the gateway is too busy for background work: a request is compressing or waiting to
// (the compression gate), or the event loop is lagging. The lag is sampled by a timer that wakes
// every LAG_TICK_MS and measures how late it woke; the shadow runner excuses its own jobs (it
// restarts the probe after each one), so a long evaluation does not count as outside load.
import type { CompressionGate } from '../proxy/compression-gate';

const LAG_TICK_MS = 50;
/** The loop woke this much later than asked: something is hogging it; leave it alone. */
export const DEFAULT_LAG_LIMIT_MS = 40;

export interface Pressure {
  busy(): boolean;
  /** Forgets the lag measured since the last tick (called after the runner's own job). */
  excuse(): void;
  close(): void;
}

export class GatewayPressure implements Pressure {
  private last = performance.now();
  private lagMs = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly gate: Pick<CompressionGate, 'occupied'>,
    private readonly lagLimitMs = DEFAULT_LAG_LIMIT_MS,
  ) {
    this.timer = setInterval(() => {
      const now = performance.now();
      this.lagMs = Math.max(0, now - this.last - LAG_TICK_MS);
      this.last = now;
    }, LAG_TICK_MS);
    this.timer.unref();
  }

  busy(): boolean {
    return this.gate.occupied > 0 || this.lagMs > this.lagLimitMs;
  }

  excuse(): void {
    this.last = performance.now();
    this.lagMs = 0;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
