// Erasure, as every hot store adapter must do it (docs/security.md): a session's originals,
// ownership, frozen decisions, flags and turn records go, and nothing of another session or
// tenant; a tenant's erasure leaves nothing of it. Run against each factory like the contract.
import type { HotStore } from '@context-guru/components';
import { uniqueTenant, writes, type HotStoreFactory } from './hot-store.contract';

const CK = 'e'.repeat(24);
const turn = { n: 4, at: 1_000, ttlMs: 300_000 };

async function seed(s: HotStore, tenant: string, session: string, id: string): Promise<void> {
  await s.putStash(tenant, session, [{ id, text: `original of ${session}` }]);
  await s.commitSession(tenant, session, { ...writes({ [`mask:${CK}`]: `[masked] <<cg:${id}>>` }, true), arm: 'treated' });
  await s.advanceTurn(tenant, session, turn);
  await s.advanceTurn(tenant, `${session}#0123456789abcdef`, turn);
}

export function defineErasureContract(name: string, factory: HotStoreFactory): void {
  describe(`HotStore erasure: ${name}`, () => {
    let s: HotStore;
    let A: string;
    let B: string;
    beforeEach(async () => {
      s = (await factory({ ttlSeconds: 100, maxEntries: 1000 })).store;
      A = uniqueTenant('ea');
      B = uniqueTenant('eb');
      await seed(s, A, `${A}:gone`, '1111111111111111');
      await seed(s, A, `${A}:stays`, '2222222222222222');
      await seed(s, B, `${B}:gone`, '3333333333333333');
    });
    afterEach(async () => s.close());

    it('eraseSession removes the session and nothing else', async () => {
      await s.eraseSession!(A, `${A}:gone`);
      expect(await s.getStash(A, '1111111111111111')).toBeNull();
      expect(await s.owns(A, `${A}:gone`, '1111111111111111')).toBe(false);
      const gone = await s.loadSession(A, `${A}:gone`, [CK]);
      expect([gone.frozen.size, gone.offloaded, gone.arm]).toEqual([0, false, undefined]);
      expect(await s.advanceTurn(A, `${A}:gone`, turn)).toBeNull();
      expect(await s.advanceTurn(A, `${A}:gone#0123456789abcdef`, turn)).toBeNull();
      // The other session of the tenant, and the other tenant's same-named session, are whole.
      expect(await s.getStash(A, '2222222222222222')).toBe(`original of ${A}:stays`);
      expect((await s.loadSession(A, `${A}:stays`, [CK])).frozen.size).toBe(1);
      expect(await s.advanceTurn(A, `${A}:stays`, turn)).not.toBeNull();
      expect(await s.getStash(B, '3333333333333333')).toBe(`original of ${B}:gone`);
    });

    it('eraseTenant removes everything of the tenant and nothing of another', async () => {
      await s.markKept(A, [CK]);
      await s.eraseTenant!(A);
      for (const id of ['1111111111111111', '2222222222222222']) expect(await s.getStash(A, id)).toBeNull();
      const after = await s.loadSession(A, `${A}:stays`, [CK]);
      expect([after.frozen.size, after.kept.size, after.offloaded]).toEqual([0, 0, false]);
      expect(await s.advanceTurn(A, `${A}:stays`, turn)).toBeNull();
      expect(await s.getStash(B, '3333333333333333')).toBe(`original of ${B}:gone`);
    });
  });
}
