// MemoryHotStore: the shared contract plus the upstream §4.2 LRU/TTL/pin semantics on a fake clock.
import { MemoryHotStore } from '@context-guru/storage';
import { defineErasureContract } from './hot-store-erasure.contract';
import { defineHotStoreContract, writes, type HotStoreFactory } from './hot-store.contract';

function fakeClock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

const memoryFactory: HotStoreFactory = async ({ ttlSeconds, maxEntries }) => {
  const clock = fakeClock();
  const store = new MemoryHotStore({ ttlSeconds, maxEntries, now: clock.now });
  return { store, expireAll: async () => clock.advance(ttlSeconds * 1000 + 1) };
};
defineHotStoreContract('memory', memoryFactory);
defineErasureContract('memory', memoryFactory);

const T = 'tenant';
const ck = (i: number) => i.toString(16).padStart(24, '0');
const id = (i: number) => i.toString(16).padStart(16, '0');

describe('MemoryHotStore semantics', () => {
  it('slides the TTL on every successful read; unread entries expire at their deadline', async () => {
    const c = fakeClock();
    const s = new MemoryHotStore({ ttlSeconds: 100, now: c.now });
    await s.putStash(T, 'sess', [
      { id: id(1), text: 'read' },
      { id: id(2), text: 'unread' },
    ]);
    c.advance(60_000);
    expect(await s.getStash(T, id(1))).toBe('read');
    c.advance(60_000); // 120 s after the put: only the read entry is still alive
    expect(await s.getStash(T, id(1))).toBe('read');
    expect(await s.getStash(T, id(2))).toBeNull();
    c.advance(100_000); // exactly the TTL after the last read: expired
    expect(await s.getStash(T, id(1))).toBeNull();
  });

  it('a touch within a second of the last slide leaves the entry where it is; a later one slides it', async () => {
    const c = fakeClock();
    const s = new MemoryHotStore({ ttlSeconds: 100, maxEntries: 4, now: c.now });
    await s.putStash(T, 'sess', [{ id: id(1), text: 'one' }]);
    await s.putStash(T, 'sess', [{ id: id(2), text: 'two' }]);
    c.advance(99); // a thousandth of the TTL is the slack: within it, a read moves nothing
    expect(await s.getStash(T, id(1))).toBe('one');
    await s.putStash(T, 'sess', [{ id: id(3), text: 'three' }]);
    // Recency as before the read: own(1) and stash(1) were the least recent and are gone.
    expect(await s.getStash(T, id(1))).toBeNull();
    c.advance(100); // now past the slack since id(2)'s put: a re-put moves and slides it
    await s.putStash(T, 'sess', [{ id: id(2), text: 'two again' }]);
    await s.putStash(T, 'sess', [{ id: id(4), text: 'four' }]);
    expect(await s.getStash(T, id(2))).toBe('two again');
    expect(await s.getStash(T, id(3))).toBeNull();
    // Its deadline slid too: alive 100 s after the re-put, not after the first put.
    c.advance(99_850);
    expect(await s.getStash(T, id(2))).toBe('two again');
  });

  it('loadSession slides frozen decisions it reads', async () => {
    const c = fakeClock();
    const s = new MemoryHotStore({ ttlSeconds: 100, now: c.now });
    await s.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: 'r1', [`mask:${ck(2)}`]: 'r2' }));
    c.advance(90_000);
    await s.loadSession(T, 'sess', [ck(1)]);
    c.advance(20_000);
    const snap = await s.loadSession(T, 'sess', [ck(1), ck(2)]);
    expect([...snap.frozen.keys()]).toEqual([`mask:${ck(1)}`]);
    expect([...snap.lost]).toEqual([`mask:${ck(2)}`]);
  });

  it('evicts the least-recently-used unpinned entry when over capacity', async () => {
    const c = fakeClock();
    const s = new MemoryHotStore({ maxEntries: 4, now: c.now });
    // putStash writes a stash and an ownership record: two entries each.
    await s.putStash(T, 'sess', [{ id: id(1), text: 'one' }]);
    await s.putStash(T, 'sess', [{ id: id(2), text: 'two' }]);
    c.advance(1000); // past the slide's slack (a second at this TTL): the read moves the entry
    expect(await s.getStash(T, id(1))).toBe('one'); // id(1) is now more recent than id(2)
    await s.putStash(T, 'sess', [{ id: id(3), text: 'three' }]);
    expect(await s.getStash(T, id(1))).toBe('one');
    expect(await s.getStash(T, id(3))).toBe('three');
    // The two least-recent entries were own(1) and stash(2), in that order.
    expect(await s.getStash(T, id(2))).toBeNull();
    expect(await s.owns(T, 'sess', id(1))).toBe(false);
    expect(s.stats(T).entries).toBe(4);
  });

  it('evicts an expired entry (pinned included) before any live unpinned one', async () => {
    const c = fakeClock();
    const s = new MemoryHotStore({ ttlSeconds: 100, maxEntries: 4, now: c.now });
    await s.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: 'old pin' }));
    c.advance(50_000);
    await s.putStash(T, 'sess', [{ id: id(1), text: 'one' }]);
    c.advance(60_000); // the pin is expired, the stash is not
    await s.markKept(T, [ck(7)]);
    await s.markKept(T, [ck(8)]);
    expect(await s.getStash(T, id(1))).toBe('one');
    expect(s.health().frozenDropped).toBe(1);
  });

  it('never evicts pins by recency, and caps pins at floor(maxEntries/2)', async () => {
    const c = fakeClock();
    const s = new MemoryHotStore({ maxEntries: 6, now: c.now });
    // Four frozen decisions: three get a pin (cap = 3), the fourth is stored unpinned.
    await s.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: 'p1', [`mask:${ck(2)}`]: 'p2', [`mask:${ck(3)}`]: 'p3' }));
    c.advance(1);
    await s.commitSession(T, 'sess', writes({ [`mask:${ck(4)}`]: 'over-cap' }));
    expect(s.stats(T).pinned).toBe(3);
    for (let i = 10; i < 20; i++) {
      c.advance(1);
      await s.markKept(T, [ck(i)]);
    }
    const snap = await s.loadSession(T, 'sess', [1, 2, 3, 4].map(ck));
    expect(Object.fromEntries(snap.frozen)).toEqual({ [`mask:${ck(1)}`]: 'p1', [`mask:${ck(2)}`]: 'p2', [`mask:${ck(3)}`]: 'p3' });
    // The unpinned decision was evicted by recency and is reported lost.
    expect([...snap.lost]).toEqual([`mask:${ck(4)}`]);
    expect(s.health()).toEqual({ frozenDropped: 1, frozenRepaired: 0 });
  });

  it('an over-cap decision claims a pin on a later write once a slot frees', async () => {
    const c = fakeClock();
    const s = new MemoryHotStore({ ttlSeconds: 100, maxEntries: 4, now: c.now });
    await s.commitSession(T, 'a', writes({ [`mask:${ck(1)}`]: 'p1', [`mask:${ck(2)}`]: 'p2' }));
    c.advance(50_000);
    await s.commitSession(T, 'a', writes({ [`mask:${ck(3)}`]: 'p3' }));
    expect(s.stats(T).pinned).toBe(2);
    c.advance(60_000); // the first two pins expire; the third is still live
    await s.commitSession(T, 'a', writes({ [`mask:${ck(3)}`]: 'p3' }));
    expect(s.stats(T).pinned).toBe(1);
    expect(s.stats(T).lostMarks).toBe(2);
  });

  it('bounds the frozen-lost marks FIFO at maxEntries, oldest dropped first', async () => {
    const c = fakeClock();
    const s = new MemoryHotStore({ ttlSeconds: 10, maxEntries: 4, now: c.now });
    const slots = [1, 2, 3, 4, 5, 6].map((i) => `mask:${ck(i)}`);
    for (const slot of slots) {
      await s.commitSession(T, 'sess', writes({ [slot]: 'r' }));
      c.advance(11_000); // each decision expires before the next write sweeps it out
    }
    await s.markKept(T, [ck(99)]);
    expect(s.health().frozenDropped).toBe(6);
    const snap = await s.loadSession(T, 'sess', [1, 2, 3, 4, 5, 6].map(ck));
    expect([...snap.lost].sort()).toEqual(slots.slice(2).sort());
  });

  it('reads a kept mark marked again after it was evicted, and none once it is gone', async () => {
    const c = fakeClock();
    const s = new MemoryHotStore({ maxEntries: 4, now: c.now });
    await s.markKept(T, [ck(1)]);
    for (let i = 10; i < 14; i++) await s.putStash(T, 'sess', [{ id: id(i), text: 'x' }]); // evicts the mark
    expect([...(await s.loadSession(T, 'sess', [ck(1)])).kept]).toEqual([]);
    await s.markKept(T, [ck(1)]);
    expect([...(await s.loadSession(T, 'sess', [ck(1), ck(2)])).kept]).toEqual([ck(1)]);
  });

  it('keeps tenants in separate LRUs: one tenant cannot evict another', async () => {
    const s = new MemoryHotStore({ maxEntries: 4 });
    await s.commitSession('victim', 'sess', writes({ [`mask:${ck(1)}`]: 'keep me' }));
    await s.putStash('victim', 'sess', [{ id: id(1), text: 'stash' }]);
    for (let i = 0; i < 50; i++) await s.putStash('noisy', 'sess', [{ id: id(100 + i), text: 'x' }]);
    expect(await s.getStash('victim', id(1))).toBe('stash');
    expect((await s.loadSession('victim', 'sess', [ck(1)])).frozen.get(`mask:${ck(1)}`)).toBe('keep me');
  });

  describe('session stamps', () => {
    it('change with everything a snapshot reports, and with nothing else', async () => {
      const c = fakeClock();
      const s = new MemoryHotStore({ ttlSeconds: 100, maxEntries: 100, now: c.now });
      const stamps: Array<number | undefined> = [s.sessionStamp(T, 'sess')];
      const step = async (act: () => Promise<unknown>) => {
        await act();
        stamps.push(s.sessionStamp(T, 'sess'));
      };
      await step(() => s.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: 'r1' }))); // 1: decision
      await step(() => s.putStash(T, 'sess', [{ id: id(1), text: 'x' }])); // 2: stash
      await step(() => s.advanceTurn(T, 'sess', { n: 3, at: c.now(), ttlMs: 300_000 })); // 3: turn
      await step(() => s.recordRewrites(T, 'sess', [1])); // 4: rewrites
      await step(() => s.loadSession(T, 'sess', [ck(1)])); // 5: a read slides the TTL
      await step(() => s.commitSession(T, 'other', writes({ [`mask:${ck(2)}`]: 'r2' }))); // 6: another session
      await step(() => s.markKept(T, [ck(9)])); // 7: a kept mark (tenant-wide)
      await step(() => s.commitSession(T, 'sess', { ...writes({}), offloaded: true })); // 8: the sticky flag
      c.advance(101_000);
      await step(() => s.loadSession(T, 'sess', [ck(1)])); // 9: the decision expired, reported lost
      expect(stamps[0]).toBeUndefined(); // nothing held for the tenant yet
      // The steps after which the stamp differs from the one before them.
      const changedAt = stamps.slice(1).flatMap((x, i) => (x !== stamps[i] ? [i + 1] : []));
      expect(changedAt).toEqual([1, 7, 8, 9]);
      expect(new Set(stamps).size).toBe(5);
    });

    it('change when a lost mark is dropped to keep the bound, and never come back after close', async () => {
      const c = fakeClock();
      const s = new MemoryHotStore({ ttlSeconds: 10, maxEntries: 2, now: c.now });
      await s.commitSession(T, 'a', writes({ [`mask:${ck(1)}`]: 'r' }));
      c.advance(11_000);
      await s.loadSession(T, 'a', [ck(1)]); // expired: a's lost mark
      const before = s.sessionStamp(T, 'a');
      for (const slot of [2, 3]) {
        await s.commitSession(T, 'b', writes({ [`mask:${ck(slot)}`]: 'r' }));
        c.advance(11_000);
        await s.loadSession(T, 'b', [ck(slot)]); // b's marks push a's out of the bounded set
      }
      expect((await s.loadSession(T, 'a', [ck(1)])).lost.size).toBe(0);
      const after = s.sessionStamp(T, 'a');
      expect(after).not.toBe(before);
      await s.close();
      await s.putStash(T, 'a', [{ id: id(1), text: 'x' }]);
      expect([before, after]).not.toContain(s.sessionStamp(T, 'a'));
    });
  });

  it('close empties the store', async () => {
    const s = new MemoryHotStore();
    await s.putStash(T, 'sess', [{ id: id(1), text: 'x' }]);
    await s.close();
    expect(await s.getStash(T, id(1))).toBeNull();
  });
});
