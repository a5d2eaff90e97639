// frozenSlot hands out each slot name once built (its hash then cached in the string); the name
// itself must be exactly `component:contentKey`, before and after its table is dropped at the cap.
import { frozenSlot, SnapshotSessionView } from '@context-guru/components';

describe('frozenSlot', () => {
  it('is component:contentKey for every pair, asked once or again, across the table reset', () => {
    for (let i = 0; i < 210_000; i++) {
      const key = `k${i}`;
      expect(frozenSlot('mask', key)).toBe(`mask:${key}`);
      if (i % 1000 === 0) expect(frozenSlot('forwarded#3', key)).toBe(`forwarded#3:${key}`);
    }
    expect(frozenSlot('mask', 'k0')).toBe('mask:k0');
    expect(frozenSlot('mask', 'k209999')).toBe('mask:k209999');
  });

  it('keeps components apart when their names share a prefix', () => {
    const view = new SnapshotSessionView({
      frozen: new Map([
        ['dedup:abc', 'one'],
        ['dedup:x:abc', 'two'],
      ]),
      lost: new Set(['mask:gone']),
      kept: new Set(),
    });
    expect(view.frozen('dedup', 'abc')).toBe('one');
    expect(view.frozen('dedup:x', 'abc')).toBe('two');
    expect(view.frozen('dedup', 'x:abc')).toBe('two');
    expect(view.frozenLost('mask', 'gone')).toBe(true);
    expect(view.frozenLost('mask', 'kept')).toBe(false);
    view.freeze('dedup', 'new', 'three');
    expect(view.newFrozen.get('dedup:new')).toBe('three');
  });
});
