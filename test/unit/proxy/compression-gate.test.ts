// The compression gate decides on arrival: a request counts against the bound from the moment it
// is admitted (while its body is still arriving), nothing is admitted while shed requests are backed
// up or while a burst's connections wait on a saturated loop, and only `running` compress at once. Body slots
// bound the whole bodies held in memory, handing a freed slot to the longest waiter.
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { BURST_CONNECTIONS, BodySlots, CompressionGate, SHED_BACKLOG_PER_PLACE } from '../../../apps/gateway/src/http/compression-gate';
import { EventLoopLoad, type LoopLoad } from '../../../apps/gateway/src/http/loop-load';

/** The loop's load as a test sets it. */
function fakeLoad(): LoopLoad & { busy: boolean; connections: number } {
  return {
    busy: false,
    connections: 1,
    saturated() {
      return this.busy;
    },
    watch: (s) => s,
    close: () => undefined,
  };
}

describe('CompressionGate', () => {
  it('sheds arrivals past the bound, counting admitted requests that have not taken a turn yet', () => {
    const gate = new CompressionGate(2, 1, fakeLoad());
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
    const gate = new CompressionGate(1, 1, fakeLoad());
    expect(gate.admit()).toBe(true);
    for (let i = 0; i < SHED_BACKLOG_PER_PLACE; i++) expect(gate.admit()).toBe(false);
    gate.leave(true);
    expect(gate.admit()).toBe(false);
    expect(gate.shedInFlight).toBe(SHED_BACKLOG_PER_PLACE + 1);
    for (let i = 0; i <= SHED_BACKLOG_PER_PLACE; i++) gate.leave(false);
    expect(gate.admit()).toBe(true);
  });

  it('lets `running` requests compress at once and the next one in when one leaves', async () => {
    const gate = new CompressionGate(3, 1, fakeLoad());
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

  it('sheds with nothing in flight while a burst of connections waits on a saturated loop', () => {
    const load = fakeLoad();
    const gate = new CompressionGate(4, 2, load);
    load.busy = true;
    // One client keeping the loop busy, or a pool the size of the throughput bench's: admitted.
    load.connections = BURST_CONNECTIONS;
    expect(gate.admit()).toBe(true);
    gate.leave(true);
    // The burst's connections, its bytes unread while nothing it sent has been seen yet: shed.
    load.connections = BURST_CONNECTIONS + 1;
    expect(gate.inFlight + gate.shedInFlight).toBe(0);
    expect(gate.admit()).toBe(false);
    gate.leave(false);
    // The loop waits for input again (it has read what there was): admitted, burst or not.
    load.busy = false;
    expect(gate.admit()).toBe(true);
    expect(gate.shed).toBe(1);
  });
});

describe('EventLoopLoad', () => {
  it('counts the open connections of the server it watches', async () => {
    const load = new EventLoopLoad();
    const server = load.watch(createServer());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const sockets = [connect(port, '127.0.0.1'), connect(port, '127.0.0.1')];
    while (load.connections < 2) await new Promise((r) => setImmediate(r));
    expect(load.connections).toBe(2);
    sockets[0]!.destroy();
    while (load.connections > 1) await new Promise((r) => setImmediate(r));
    expect(load.connections).toBe(1);
    sockets[1]!.destroy();
    await new Promise((r) => server.close(r));
    load.close();
  });

  it('reads a loop that has not waited for input since the window began as saturated', () => {
    const load = new EventLoopLoad();
    // No await from construction to the call: the loop never reached its idle wait in between.
    const until = performance.now() + 120;
    while (performance.now() < until);
    expect(load.saturated()).toBe(true);
    load.close();
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

  it('lets one client read at most its share, and frees the share once a body is read', async () => {
    const slots = new BodySlots(4, 2);
    expect(slots.take('slow')).toBeUndefined();
    expect(slots.take('slow')).toBeUndefined();
    const got: string[] = [];
    void slots.take('slow')!.then(() => got.push('slow 3'));
    // Another client is not held behind the first one's share.
    expect(slots.take('keyed')).toBeUndefined();
    await Promise.resolve();
    expect(got).toEqual([]);
    expect([slots.inUse, slots.waiters]).toEqual([3, 1]);
    // A body read in full frees its client's share; the place stays held until it is given back.
    slots.readDone('slow');
    await Promise.resolve();
    expect(got).toEqual(['slow 3']);
    expect(slots.inUse).toBe(4);
    slots.give();
    expect(slots.inUse).toBe(3);
  });
});
