// The GC probe's arithmetic (npm run bench:profile -- gc): per-request figures from the two
// snapshots the preload hook writes around a load window.
import { gcWindow, lastTwo, type GcSnapshot } from '../../../bench/gc-window';

const snap = (minor: [number, number], major: [number, number], oldUsed: number): GcSnapshot => ({
  minor: { n: minor[0], ms: minor[1] },
  major: { n: major[0], ms: major[1] },
  other: { n: 0, ms: 0 },
  oldUsed,
});

describe('gcWindow', () => {
  it('gives scavenges, their pause per request and old-space growth per request', () => {
    const w = gcWindow(snap([10, 50], [2, 30], 40 << 20), snap([22, 170], [2, 30], 50 << 20), 1280);
    expect(w.scavenges).toBe(12);
    expect(w.scavengeUs).toBeCloseTo((120 * 1000) / 1280);
    expect(w.majors).toBe(0);
    expect(w.otherPasses).toBe(0);
    expect(w.promotedKb).toBeCloseTo((10 * 1024) / 1280);
  });

  it('reports no promotion figure when a major GC ran in the window (growth no longer measures it)', () => {
    const w = gcWindow(snap([0, 0], [1, 5], 50 << 20), snap([4, 8], [2, 12], 30 << 20), 100);
    expect(w.majors).toBe(1);
    expect(w.majorUs).toBeCloseTo(70);
    expect(w.promotedKb).toBeNull();
  });
});

describe('lastTwo', () => {
  it('reads the last two snapshot lines of the hook file', () => {
    const lines = [snap([1, 1], [0, 0], 1), snap([2, 2], [0, 0], 2), snap([3, 3], [0, 0], 3)].map((s) => JSON.stringify(s)).join('\n');
    const [a, b] = lastTwo(`${lines}\n`);
    expect([a.oldUsed, b.oldUsed]).toEqual([2, 3]);
  });

  it('refuses a file with fewer than two snapshots', () => {
    expect(() => lastTwo(`${JSON.stringify(snap([1, 1], [0, 0], 1))}\n`)).toThrow('expected two GC snapshots, found 1');
  });
});
