// Bounds the compression work the gateway takes on, decided when a request ARRIVES, before its body
// is read. A request is shed — served at once without new compression work — when
//  - `limit` admitted requests are still reading their body, waiting or compressing, or
//    `limit × SHED_BACKLOG_PER_PLACE` shed ones are still being read and prepared; or
//  - more than BURST_CONNECTIONS client connections are open and the event loop has not waited for
//    input in the recent window (loop-load.ts).
// Deciding at arrival matters because under a burst most of the event loop goes into receiving and
// decoding bodies, so a gate consulted only once a body is complete rarely sees a full queue (a run
// shed 59 of 1,000). The counts alone are not enough: arrivals under a burst are spread out by the
// very loop that serves them (and by a client starved of CPU), so they often find nothing in
// flight — a trace of a burst on the loaded machine admitted 427 of 897 requests, each arriving with
// 0 admitted and 0 shed in flight while the loop had been busy all along — and the 15 ms (on a quiet
// machine) of compressing each 200 KB body is what left the rest unread: p99 13× the bare proxy's.
// The bytes not yet read are the backlog; the loop that never waits for input shows them, and many
// open connections tell a burst from a client pool keeping a saturated loop busy (the throughput
// bench's 1 and 32 connections are never shed by it; that burst had 97–196 open while it was read).
// Compression runs on the one event loop, so an admitted request whose body is in waits for its turn (a turn starts from
// setImmediate, so sockets are read between turns); at most `running` compress at once (one per
// usable CPU — the pod's cgroup quota when it has one, cpu-quota.ts — since a store round trip
// leaves room for another). A shed request runs no component: only what
// the provider has cached comes back (the forwarded bytes of earlier turns, replayed
// byte-identically), so no cached prefix busts and its latency stays near the upstream's own.
import { usableCores } from './cpu-quota';
import { EventLoopLoad, type LoopLoad } from './loop-load';

const QUEUE_PER_CORE = 2;
/**
 * Shed requests still being prepared, per admission place, past which nothing new is admitted.
 * @internal exported for tests
 */
export const SHED_BACKLOG_PER_PLACE = 4;
/**
 * Open client connections past which a saturated loop sheds: a burst, not a client's pool.
 * @internal exported for tests
 */
export const BURST_CONNECTIONS = 64;

export class CompressionGate {
  private readonly waiting: Array<() => void> = [];
  /** Admitted and not yet left: reading the body, waiting for a turn or compressing. */
  private admitted = 0;
  /** Shed and not yet left: reading the body, decoding, replaying. */
  private shedding = 0;
  private active = 0;
  private scheduled = false;
  /** Requests served without new compression work since start. */
  shed = 0;

  readonly limit: number;
  readonly running: number;

  /** Unset limit and running follow `cores`: the CPUs the pod's quota allows, else the node's. */
  constructor(
    limit?: number,
    running?: number,
    readonly load: LoopLoad = new EventLoopLoad(),
    cores = usableCores(),
  ) {
    this.limit = limit ?? Math.max(2, cores * QUEUE_PER_CORE);
    this.running = running ?? Math.max(1, cores);
  }

  /** On arrival: true admits the request, false sheds it; either way it must `leave` exactly once. */
  admit(): boolean {
    const backlogged = this.admitted >= this.limit || this.shedding >= this.limit * SHED_BACKLOG_PER_PLACE;
    const behind = !backlogged && this.load.connections > BURST_CONNECTIONS && this.load.saturated();
    if (backlogged || behind) {
      this.shed++;
      this.shedding++;
      return false;
    }
    this.admitted++;
    return true;
  }

  /** An admitted request whose body is in waits here for one of the `running` places. */
  turn(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(() => {
        this.active++;
        resolve();
      });
      this.pump();
    });
  }

  /** A request is prepared (or never got to be: its body was refused); `admitted` as `admit` said. */
  leave(admitted: boolean, hadTurn = false): void {
    if (!admitted) {
      this.shedding = Math.max(0, this.shedding - 1);
      return;
    }
    this.admitted = Math.max(0, this.admitted - 1);
    if (hadTurn) this.active = Math.max(0, this.active - 1);
    this.pump();
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Requests being prepared — admitted (reading, waiting or compressing) or shed (read and replayed):
   * work that background jobs (shadow evaluation) must not compete with.
   */
  get occupied(): number {
    return this.admitted + this.shedding;
  }

  get inFlight(): number {
    return this.admitted;
  }

  get shedInFlight(): number {
    return this.shedding;
  }

  private pump(): void {
    if (this.scheduled || this.active >= this.running || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()?.();
      this.pump();
    });
  }
}

/**
 * Whole bodies held in memory at once: a slot is taken before a body is read and given back once
 * the upstream has answered its first call (the body is not needed in full after that). Past the
 * bound a request waits unread — its bytes stay in the socket, where TCP backpressure holds them —
 * so a burst of large bodies cannot hold them all in the heap while they queue for an upstream
 * connection (there are as many slots as upstream connections, so the wait is one it would have
 * had anyway). One client (a tenant at an address) may be READING at most `perClient` bodies at
 * once: a body is read at the client's pace, so without that share a client that sends headers and
 * then trickles its bodies held every slot and every other tenant's request waited unread behind it.
 * A body read in full no longer counts against its client's share, so a busy client whose bodies
 * arrive at once keeps as many upstream calls going as the pool has.
 */
export class BodySlots {
  private readonly waiting: Array<{ client: string; grant: () => void }> = [];
  private held = 0;
  private readonly reading = new Map<string, number>();

  constructor(
    readonly size: number,
    readonly perClient = Number.POSITIVE_INFINITY,
  ) {}

  /** A place to read a body of `client` in; undefined when one is free at once. */
  take(client = ''): Promise<void> | undefined {
    if (this.held < this.size && this.readingBy(client) < this.perClient) {
      this.grant(client);
      return undefined;
    }
    return new Promise<void>((resolve) => this.waiting.push({ client, grant: resolve }));
  }

  /** The body of a request of `client` is read (or never will be): its share of reading frees. */
  readDone(client = ''): void {
    const n = this.readingBy(client) - 1;
    if (n > 0) this.reading.set(client, n);
    else this.reading.delete(client);
    this.pump();
  }

  give(): void {
    this.held = Math.max(0, this.held - 1);
    this.pump();
  }

  get inUse(): number {
    return this.held;
  }

  /** Requests waiting for a place. */
  get waiters(): number {
    return this.waiting.length;
  }

  private readingBy(client: string): number {
    return this.reading.get(client) ?? 0;
  }

  private grant(client: string): void {
    this.held++;
    this.reading.set(client, this.readingBy(client) + 1);
  }

  /** The first waiters, in arrival order, whose client is within its share, while places are free. */
  private pump(): void {
    for (let i = 0; i < this.waiting.length && this.held < this.size;) {
      const w = this.waiting[i];
      if (!w || this.readingBy(w.client) >= this.perClient) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.grant(w.client);
      w.grant();
    }
  }
}
