// A command deadline that measures the store, not the gateway's own event loop.
//
// A plain timer (ioredis's `commandTimeout`) fires in the timers phase, which runs before the poll
// phase that reads replies. After a synchronous stretch longer than the deadline — a large
// pipeline run, a process starved of CPU on a loaded machine — every pending command would then
// time out with its reply already waiting in the socket, and each request would fail open (and
// forward its pristine body, busting a prefix the provider had cached). Deferring the verdict by
// one setImmediate lets that poll phase run first: only a command still unanswered after the loop
// has read its socket again is late.

/** `p`, or `late()` when it has not settled `ms` after the call and one I/O poll later. */
export function loopFairDeadline<T>(p: Promise<T>, ms: number, late: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (done) return;
        done = true;
        reject(late());
      });
    }, ms);
    p.then(
      (value) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        reject(err as Error);
      },
    );
  });
}
