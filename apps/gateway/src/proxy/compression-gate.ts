// Bounds the compression work the gateway takes on. Every request that would run a pipeline holds
// a slot from arrival until its body is prepared; the slots number a small multiple of the cores.
// When they are all taken, a new request is still served at once, but without new compression
// work: the pipeline is skipped and only what the provider has cached comes back (the forwarded
// bytes of earlier turns, replayed byte-identically), so no cached prefix busts and latency stays
// near the upstream's own instead of queueing behind work nobody can wait for.
import { availableParallelism } from 'node:os';

export const SLOTS_PER_CORE = 8;

export class CompressionGate {
  private held = 0;
  /** Requests served without new compression work since start. */
  shed = 0;

  constructor(readonly limit = Math.max(2, availableParallelism() * SLOTS_PER_CORE)) {}

  /** True: this request may compress (call `release` when prepared); false: it is shed. */
  tryAcquire(): boolean {
    if (this.held >= this.limit) {
      this.shed++;
      return false;
    }
    this.held++;
    return true;
  }

  release(): void {
    this.held = Math.max(0, this.held - 1);
  }

  get inFlight(): number {
    return this.held;
  }
}
