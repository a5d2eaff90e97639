// The HotStore contract every adapter passes: define it once, run it against each factory.
import type { HotStore, SessionWrites } from '@context-guru/components';

interface HotStoreHarness {
  store: HotStore;
  /**
   * Lets every value's TTL elapse (memory: move the clock past the TTL; Redis: drop the value
   * keys as expiry would, keeping the longer-lived frozen index).
   */
  expireAll(): Promise<void>;
}

export interface HotStoreFactory {
  (opts: { ttlSeconds: number; maxEntries: number }): Promise<HotStoreHarness>;
}

let seq = 0;
/** Unique tenant per test so suites sharing a server never see each other's keys. */
export function uniqueTenant(label = 't'): string {
  return `${label}-${process.pid}-${Date.now().toString(36)}-${seq++}`;
}

export function writes(frozen: Record<string, string>, offloaded = false): SessionWrites {
  return { frozen: new Map(Object.entries(frozen)), offloaded };
}

const CK1 = 'a'.repeat(24);
const CK2 = 'b'.repeat(24);
const CK3 = 'c'.repeat(24);

export function defineHotStoreContract(name: string, factory: HotStoreFactory): void {
  describe(`HotStore contract: ${name}`, () => {
    let h: HotStoreHarness;
    let s: HotStore;
    let A: string;
    let B: string;

    beforeEach(async () => {
      h = await factory({ ttlSeconds: 100, maxEntries: 1000 });
      s = h.store;
      A = uniqueTenant('a');
      B = uniqueTenant('b');
    });
    afterEach(async () => {
      await s.close();
    });

    it('is persistent, pings, and round-trips a stash', async () => {
      expect(s.persistent).toBe(true);
      await s.ping();
      await s.putStash(A, 'sess', [{ id: '0123456789abcdef', text: 'original ✓ bytes\n' }]);
      expect(await s.getStash(A, '0123456789abcdef')).toBe('original ✓ bytes\n');
      expect(await s.getStash(A, 'ffffffffffffffff')).toBeNull();
    });

    it('records ownership per session', async () => {
      await s.putStash(A, 's1', [
        { id: '1111111111111111', text: 'x' },
        { id: '2222222222222222', text: 'y' },
      ]);
      expect(await s.owns(A, 's1', '1111111111111111')).toBe(true);
      expect(await s.owns(A, 's1', '2222222222222222')).toBe(true);
      expect(await s.owns(A, 's2', '1111111111111111')).toBe(false);
      expect(await s.owns(A, 's1', '3333333333333333')).toBe(false);
    });

    it('isolates tenants: stash, ownership, frozen, kept, offloaded and turns', async () => {
      await s.putStash(A, 'sess', [{ id: 'aaaaaaaaaaaaaaaa', text: 'secret of A' }]);
      await s.commitSession(A, 'sess', writes({ [`mask:${CK1}`]: 'A-frozen' }, true));
      await s.markKept(A, [CK2]);
      await s.advanceTurn(A, 'sess', { n: 4, at: 1000, ttlMs: 300_000 });

      expect(await s.getStash(B, 'aaaaaaaaaaaaaaaa')).toBeNull();
      expect(await s.owns(B, 'sess', 'aaaaaaaaaaaaaaaa')).toBe(false);
      const snapB = await s.loadSession(B, 'sess', [CK1, CK2]);
      expect(snapB.frozen.size).toBe(0);
      expect(snapB.kept.size).toBe(0);
      expect(snapB.lost.size).toBe(0);
      expect(snapB.offloaded).toBe(false);
      expect(await s.advanceTurn(B, 'sess', { n: 1, at: 2000, ttlMs: 0 })).toBeNull();

      const snapA = await s.loadSession(A, 'sess', [CK1, CK2]);
      expect(snapA.frozen.get(`mask:${CK1}`)).toBe('A-frozen');
      expect([...snapA.kept]).toEqual([CK2]);
      expect(snapA.offloaded).toBe(true);
    });

    it('prefetches only the frozen slots of the requested content keys', async () => {
      await s.commitSession(A, 'sess', writes({ [`mask:${CK1}`]: 'm1', [`failed_run:${CK1}`]: 'f1', [`mask:${CK2}`]: 'm2' }));
      const snap = await s.loadSession(A, 'sess', [CK1, CK3]);
      expect(Object.fromEntries(snap.frozen)).toEqual({ [`mask:${CK1}`]: 'm1', [`failed_run:${CK1}`]: 'f1' });
      expect((await s.loadSession(A, 'other', [CK1])).frozen.size).toBe(0);
    });

    it('keeps the offloaded flag sticky and frozen replacements byte-identical', async () => {
      const replacement = 'line\r\n\ttab ünïcödé 🚀 <<cg:0123456789abcdef>> [full output: call context_guru_expand]';
      await s.commitSession(A, 'sess', writes({ [`mask:${CK1}`]: replacement }, true));
      await s.commitSession(A, 'sess', writes({}, false));
      const snap = await s.loadSession(A, 'sess', [CK1]);
      expect(snap.frozen.get(`mask:${CK1}`)).toBe(replacement);
      expect(snap.offloaded).toBe(true);
    });

    it("records a session's first arm and never overwrites it, per tenant", async () => {
      expect((await s.loadSession(A, 'sess', [])).arm).toBeUndefined();
      await s.commitSession(A, 'sess', { frozen: new Map(), offloaded: false, arm: 'holdout' });
      await s.commitSession(A, 'sess', { frozen: new Map([[`mask:${CK1}`, 'm']]), offloaded: true, arm: 'treated' });
      const snap = await s.loadSession(A, 'sess', [CK1]);
      expect([snap.arm, snap.offloaded, snap.frozen.get(`mask:${CK1}`)]).toEqual(['holdout', true, 'm']);
      expect((await s.loadSession(A, 'other', [])).arm).toBeUndefined();
      expect((await s.loadSession(B, 'sess', [])).arm).toBeUndefined();
      await s.commitSession(B, 'sess', { frozen: new Map(), offloaded: false, arm: 'treated' });
      expect([(await s.loadSession(A, 'sess', [])).arm, (await s.loadSession(B, 'sess', [])).arm]).toEqual(['holdout', 'treated']);
    });

    it('marks content kept tenant-wide', async () => {
      await s.markKept(A, [CK1, CK2]);
      const snap = await s.loadSession(A, 'any-session', [CK1, CK3]);
      expect([...snap.kept]).toEqual([CK1]);
    });

    it('advanceTurn returns the previous turn and widens the TTL monotonically', async () => {
      expect(await s.advanceTurn(A, 'sess', { n: 3, at: 1000, ttlMs: 3_600_000 })).toBeNull();
      expect(await s.advanceTurn(A, 'sess', { n: 5, at: 2000, ttlMs: 300_000 })).toEqual({
        n: 3,
        at: 1000,
        ttlMs: 3_600_000,
        rewritten: [],
      });
      expect(await s.advanceTurn(A, 'sess', { n: 2, at: 3000, ttlMs: 300_000 })).toEqual({
        n: 5,
        at: 2000,
        ttlMs: 3_600_000,
        rewritten: [],
      });
      expect(await s.advanceTurn(A, 'other', { n: 1, at: 3000, ttlMs: 0 })).toBeNull();
    });

    it('recordRewrites is returned with the previous turn once, then reset by the next advance', async () => {
      await s.advanceTurn(A, 'rw', { n: 4, at: 1000, ttlMs: 0 });
      await s.recordRewrites(A, 'rw', [1, 3]);
      expect((await s.advanceTurn(A, 'rw', { n: 6, at: 2000, ttlMs: 0 }))?.rewritten).toEqual([1, 3]);
      // The turn just advanced rewrote nothing (bypassed, or nothing changed): known empty.
      expect((await s.advanceTurn(A, 'rw', { n: 8, at: 3000, ttlMs: 0 }))?.rewritten).toEqual([]);
      // Tenant-scoped like every other key.
      await s.recordRewrites(B, 'rw', [0]);
      expect((await s.advanceTurn(A, 'rw', { n: 9, at: 4000, ttlMs: 0 }))?.rewritten).toEqual([]);
    });

    it('advanceTurn is atomic: of 20 concurrent calls exactly one sees no previous turn', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => s.advanceTurn(A, 'race', { n: i + 1, at: 10_000 + i, ttlMs: 1000 })),
      );
      expect(results.filter((r) => r === null)).toHaveLength(1);
      // Every caller saw a distinct predecessor: a chain, never two holders of the same turn.
      const seen = results.filter((r) => r !== null).map((r) => r!.n);
      expect(new Set(seen).size).toBe(19);
    });

    it('reports an expired frozen decision as lost, and counts the repair when it is written again', async () => {
      const before = s.health();
      await s.commitSession(A, 'sess', writes({ [`mask:${CK1}`]: 'r1', [`mask:${CK2}`]: 'r2' }));
      await h.expireAll();
      const snap = await s.loadSession(A, 'sess', [CK1]);
      expect(snap.frozen.size).toBe(0);
      expect([...snap.lost]).toEqual([`mask:${CK1}`]);
      // Lost stays lost across reads until repaired.
      expect([...(await s.loadSession(A, 'sess', [CK1])).lost]).toEqual([`mask:${CK1}`]);
      expect(s.health().frozenDropped).toBeGreaterThan(before.frozenDropped);

      await s.commitSession(A, 'sess', writes({ [`mask:${CK1}`]: 'r1' }));
      const after = await s.loadSession(A, 'sess', [CK1]);
      expect(after.lost.size).toBe(0);
      expect(after.frozen.get(`mask:${CK1}`)).toBe('r1');
      expect(s.health().frozenRepaired).toBe(before.frozenRepaired + 1);
      // Lost marks are per tenant.
      await s.commitSession(B, 'sess', writes({ [`mask:${CK2}`]: 'b' }));
      expect((await s.loadSession(B, 'sess', [CK2])).lost.size).toBe(0);
    });

    it('expires stashes, ownership and kept marks with their TTL', async () => {
      await s.putStash(A, 'sess', [{ id: 'abababababababab', text: 'x' }]);
      await s.markKept(A, [CK1]);
      await h.expireAll();
      expect(await s.getStash(A, 'abababababababab')).toBeNull();
      expect(await s.owns(A, 'sess', 'abababababababab')).toBe(false);
      expect((await s.loadSession(A, 'sess', [CK1])).kept.size).toBe(0);
    });
  });
}
