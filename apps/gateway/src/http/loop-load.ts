// Whether the event loop has work waiting: the share of the last LOOP_WINDOW_MS (at least; up to
// twice that) it spent outside its idle wait, from libuv's own idle-time counter
// (performance.eventLoopUtilization). A loop that keeps finding sockets ready never waits, so
// under a burst it reads ≈ 1 for as long as there are bytes unread — a backlog the kernel holds,
// which no count of the requests already seen can show, and which does not drain in a moment the
// way the shed requests still being prepared do. Unlike a timer's lateness it is not inflated by
// the machine's other processes: time descheduled while waiting for input still counts as idle.
// The window covers the stretch running now (read at the call, not at the last tick), so one long
// poll phase reading a thousand sockets is seen by the requests it delivers.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

export interface LoopLoad {
  /** The loop has had work waiting (almost) all of the recent window. */
  saturated(): boolean;
  /** Client connections open now: under a burst, most are requests not even read yet. */
  readonly connections: number;
  /** Counts `server`'s open connections from now on. */
  watch<S extends Server>(server: S): S;
  close(): void;
}

const LOOP_WINDOW_MS = 50;
/** Busy this share of the window: it has not been waiting for input, so it is behind. */
const SATURATED_SHARE = 0.9;

export class EventLoopLoad implements LoopLoad {
  private older: EventLoopUtilization = performance.eventLoopUtilization();
  private newer: EventLoopUtilization = this.older;
  private readonly timer: NodeJS.Timeout;
  connections = 0;

  constructor(private readonly share = SATURATED_SHARE) {
    this.timer = setInterval(() => {
      this.older = this.newer;
      this.newer = performance.eventLoopUtilization();
    }, LOOP_WINDOW_MS);
    this.timer.unref();
  }

  saturated(): boolean {
    return performance.eventLoopUtilization(this.older).utilization >= this.share;
  }

  /** One listener per connection, none per request. */
  watch<S extends Server>(server: S): S {
    server.on('connection', (socket: Socket) => {
      this.connections++;
      socket.once('close', () => this.connections--);
    });
    return server;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
