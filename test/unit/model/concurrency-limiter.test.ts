import { ConcurrencyLimiter } from '../../../apps/gateway/src/model/concurrency-limiter';

describe('ConcurrencyLimiter', () => {
  it('admits up to the limit and hands freed slots out in arrival order', async () => {
    const lim = new ConcurrencyLimiter(2);
    const r1 = await lim.acquire();
    const r2 = await lim.acquire();
    const order: string[] = [];
    const w3 = lim.acquire().then((r) => (order.push('third'), r));
    const w4 = lim.acquire().then((r) => (order.push('fourth'), r));
    expect(lim.inFlight).toBe(2);
    expect(lim.queued).toBe(2);
    r1();
    r1(); // a second release of the same slot is ignored
    const r3 = await w3;
    expect(order).toEqual(['third']);
    expect(lim.inFlight).toBe(2);
    r2();
    const r4 = await w4;
    expect(order).toEqual(['third', 'fourth']);
    r3();
    r4();
    expect(lim.inFlight).toBe(0);
  });

  it('gives up waiting when the caller signal aborts, without taking a slot', async () => {
    const lim = new ConcurrencyLimiter(1);
    const held = await lim.acquire();
    const ctl = new AbortController();
    const waiting = lim.acquire(ctl.signal);
    ctl.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('deadline');
    expect(lim.queued).toBe(0);
    held();
    expect(lim.inFlight).toBe(0);
  });

  it('rejects with an Error whatever the signal was aborted with', async () => {
    const lim = new ConcurrencyLimiter(1);
    const held = await lim.acquire();
    const ctl = new AbortController();
    const waiting = lim.acquire(ctl.signal);
    ctl.abort('shutting down');
    await expect(waiting).rejects.toMatchObject({ message: 'aborted: shutting down', cause: 'shutting down' });
    await expect(waiting).rejects.toBeInstanceOf(Error);
    const already = lim.acquire(ctl.signal);
    await expect(already).rejects.toBeInstanceOf(Error);
    // The per-call deadline's TimeoutError passes as it is: the model client classifies it by name.
    const deadline = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    await expect(lim.acquire(AbortSignal.abort(deadline))).rejects.toBe(deadline);
    held();
  });

  it('treats 0 as unlimited', async () => {
    const lim = new ConcurrencyLimiter(0);
    const slots = await Promise.all(Array.from({ length: 50 }, () => lim.acquire()));
    expect(lim.inFlight).toBe(50);
    slots.forEach((r) => r());
    expect(lim.inFlight).toBe(0);
  });
});
