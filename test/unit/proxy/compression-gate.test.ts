// The compression gate decides on arrival: a request counts against the bound from the moment it
// is admitted (while its body is still arriving), nothing is admitted while shed requests are backed
// up, and only `running` compress at once. Body slots
// bound the whole bodies held in memory, handing a freed slot to the longest waiter.
import { BodySlots, CompressionGate, SHED_BACKLOG_PER_PLACE } from '../../../apps/gateway/src/proxy/compression-gate';

describe('CompressionGate', () => {
  it('sheds arrivals past the bound, counting admitted requests that have not taken a turn yet', () => {
    const gate = new CompressionGate(2, 1);
    expect(gate.admit()).toBe(true);
    expect(gate.admit()).toBe(true);
    expect(gate.admit()).toBe(false);
    expect(gate.shed).toBe(1);
    gate.leave(true);
    expect(gate.admit()).toBe(true);
    expect(gate.inFlight).toBe(2);
    gate.leave(false);
    expect(gate.shedInFlight).toBe(0);
  });

  it('admits nothing new while the shed backlog is full, even with a place free', () => {
    const gate = new CompressionGate(1, 1);
    expect(gate.admit()).toBe(true);
    for (let i = 0; i < SHED_BACKLOG_PER_PLACE; i++) expect(gate.admit()).toBe(false);
    gate.leave(true);
    expect(gate.admit()).toBe(false);
    expect(gate.shedInFlight).toBe(SHED_BACKLOG_PER_PLACE + 1);
    for (let i = 0; i <= SHED_BACKLOG_PER_PLACE; i++) gate.leave(false);
    expect(gate.admit()).toBe(true);
  });

  it('lets `running` requests compress at once and the next one in when one leaves', async () => {
    const gate = new CompressionGate(3, 1);
    const order: string[] = [];
    for (const _ of [1, 2, 3]) expect(gate.admit()).toBe(true);
    const a = gate.turn().then(() => order.push('a'));
    const b = gate.turn().then(() => order.push('b'));
    await a;
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['a']);
    gate.leave(true, true);
    await b;
    expect(order).toEqual(['a', 'b']);
    expect(gate.queued).toBe(0);
  });
});

describe('BodySlots', () => {
  it('holds at most `size` bodies and hands a freed slot to the first waiter', async () => {
    const slots = new BodySlots(2);
    expect(slots.take()).toBeUndefined();
    expect(slots.take()).toBeUndefined();
    const got: number[] = [];
    void slots.take()!.then(() => got.push(3));
    void slots.take()!.then(() => got.push(4));
    await Promise.resolve();
    expect(got).toEqual([]);
    slots.give();
    await Promise.resolve();
    expect(got).toEqual([3]);
    expect(slots.inUse).toBe(2);
    slots.give();
    slots.give();
    await Promise.resolve();
    expect(got).toEqual([3, 4]);
    expect(slots.inUse).toBe(1);
  });
});
