// Bounds the compression work the gateway takes on with an explicit queue. Compression runs on the
// one event loop, so a request whose body is ready waits for its turn (a turn starts from
// setImmediate, so the sockets are read between turns and new arrivals are seen); at most `running`
// requests compress at once (one per core: a store round trip leaves room for another) and at most
// `limit` wait or run. A request that finds the queue full is served at once without new
// compression work: no component runs and only what the provider has cached comes back (the
// forwarded bytes of earlier turns, replayed byte-identically), so no cached prefix busts and its
// latency stays near the upstream's own instead of queueing behind work nobody can wait for.
import { availableParallelism } from 'node:os';

export const QUEUE_PER_CORE = 2;

export class CompressionGate {
  private readonly waiting: Array<() => void> = [];
  private active = 0;
  private scheduled = false;
  /** Requests served without new compression work since start. */
  shed = 0;

  constructor(
    readonly limit = Math.max(2, availableParallelism() * QUEUE_PER_CORE),
    readonly running = Math.max(1, availableParallelism()),
  ) {}

  /** True once it is this request's turn to compress (call `leave` after); false: shed, at once. */
  enter(): Promise<boolean> | false {
    if (this.active + this.waiting.length >= this.limit) {
      this.shed++;
      return false;
    }
    return new Promise<boolean>((resolve) => {
      this.waiting.push(() => resolve(true));
      this.pump();
    });
  }

  leave(): void {
    this.active = Math.max(0, this.active - 1);
    this.pump();
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Requests compressing or waiting to: work that background jobs (shadow evaluation) must not compete with. */
  get occupied(): number {
    return this.active + this.waiting.length;
  }

  private pump(): void {
    if (this.scheduled || this.active >= this.running || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const next = this.waiting.shift();
      if (next) {
        this.active++;
        next();
      }
      this.pump();
    });
  }
}
