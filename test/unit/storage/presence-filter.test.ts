// PresenceFilter: no key that was added is ever reported absent, few that were not are reported
// present, and before its boot scan is through every key "may" be there.
import { keptKey, PresenceFilter, sessionKey } from '../../../libs/storage/src/sql/presence-filter';

/** A database with nothing stored yet: the boot scan finds no rows. */
const empty = { query: async () => [], exec: async () => undefined };

async function scannedFilter(): Promise<PresenceFilter> {
  const f = new PresenceFilter();
  f.scanOnce(empty);
  while (!f.scanned) await new Promise((r) => setImmediate(r));
  return f;
}

describe('PresenceFilter', () => {
  it('reports every key present until its boot scan is through', () => {
    const f = new PresenceFilter();
    expect(f.mayHold(sessionKey('t', 'anything'))).toBe(true);
  });

  it('never reports an added key absent, and rarely an unseen one present', async () => {
    const f = await scannedFilter();
    for (let i = 0; i < 200_000; i++) f.add(sessionKey(`tenant-${i % 7}`, `session-${i}`));
    for (let i = 0; i < 200_000; i++) expect(f.mayHold(sessionKey(`tenant-${i % 7}`, `session-${i}`))).toBe(true);
    let present = 0;
    for (let i = 200_000; i < 400_000; i++) if (f.mayHold(sessionKey(`tenant-${i % 7}`, `session-${i}`))) present++;
    expect(present / 200_000).toBeLessThan(0.001);
  });

  it('keeps sessions, kept marks and tenants apart', async () => {
    const f = await scannedFilter();
    f.add(sessionKey('ta', 'abc'));
    f.add(keptKey('ta', 'def'));
    expect([f.mayHold(sessionKey('ta', 'abc')), f.mayHold(keptKey('ta', 'def'))]).toEqual([true, true]);
    expect([f.mayHold(keptKey('ta', 'abc')), f.mayHold(sessionKey('ta', 'def')), f.mayHold(sessionKey('tb', 'abc'))]).toEqual([
      false,
      false,
      false,
    ]);
  });

  it('a failed boot scan leaves every key present', async () => {
    const f = new PresenceFilter();
    f.scanOnce({ query: async () => Promise.reject(new Error('relation "kept" does not exist')), exec: async () => undefined });
    await new Promise((r) => setImmediate(r));
    expect(f.scanned).toBe(false);
    expect(f.mayHold(sessionKey('t', 'x'))).toBe(true);
  });
});
