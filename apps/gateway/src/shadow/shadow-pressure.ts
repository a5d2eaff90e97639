// Whether the gateway is too busy for background work: a request is compressing or waiting to
// (the compression gate), or the event loop keeps lagging. The lag is sampled by a timer that
// wakes every LAG_TICK_MS and measures how late it woke, smoothed (one request's compression
// burst is the gate's business; a loop that stays late is load); the shadow runner excuses its
// own jobs (the probe restarts after each one), so an evaluation never counts as outside load.
import type { CompressionGate } from '../http/compression-gate';

const LAG_TICK_MS = 50;
/** Weight of the newest sample in the smoothed lag: a lone late wake-up moves it a fifth of the way. */
const LAG_WEIGHT = 0.2;
/** The loop woke this much later than asked: something is hogging it; leave it alone. */
const DEFAULT_LAG_LIMIT_MS = 40;

export interface Pressure {
  busy(): boolean;
  /** Does not count the time since the last tick as lag (called after the runner's own job). */
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
      const late = Math.max(0, now - this.last - LAG_TICK_MS);
      this.lagMs += (late - this.lagMs) * LAG_WEIGHT;
      this.last = now;
    }, LAG_TICK_MS);
    this.timer.unref();
  }

  busy(): boolean {
    return this.gate.occupied > 0 || this.lagMs > this.lagLimitMs;
  }

  excuse(): void {
    this.last = performance.now();
  }

  close(): void {
    clearInterval(this.timer);
  }
}
