// The bounded process-level counters /stats reads: the miss ledger (≤200 distinct selectors,
// first seen wins, ≤120 bytes each, no blob-shaped lines, top 20 served) and the act counters.
import { FilterActStats, SelectorMissLedger, clipUtf8, isBlobShaped } from '@context-guru/dsl';

describe('SelectorMissLedger', () => {
  it('counts misses and serves the top n, count descending, ties in first-seen order', () => {
    const l = new SelectorMissLedger();
    for (const s of ['$ ls -la', 'total 48', 'total 48', 'Hello', 'total 48', 'Hello']) l.record(s);
    expect(l.top(2)).toEqual([
      { selector: 'total 48', count: 3 },
      { selector: 'Hello', count: 2 },
    ]);
    expect(l.top()).toHaveLength(3);
  });

  it('holds at most 200 distinct selectors: the first seen keep their slots', () => {
    const l = new SelectorMissLedger();
    for (let i = 0; i < 250; i++) l.record(`selector ${i}`);
    expect(l.size).toBe(200);
    expect(l.record('selector 249')).toBe(false);
    expect(l.record('selector 0')).toBe(true);
    expect(l.top(1)).toEqual([{ selector: 'selector 0', count: 2 }]);
  });

  it('serves 20 by default', () => {
    const l = new SelectorMissLedger();
    for (let i = 0; i < 30; i++) l.record(`line ${i}`);
    expect(l.top()).toHaveLength(20);
  });

  it('clips selectors to 120 UTF-8 bytes without splitting a character', () => {
    const l = new SelectorMissLedger();
    l.record('é'.repeat(100));
    const selector = l.top(1)[0]!.selector;
    expect(Buffer.byteLength(selector)).toBe(120);
    expect(selector).toBe('é'.repeat(60));
    expect(clipUtf8('ab€', 4)).toBe('ab');
  });

  it('skips blank, base64-shaped and image-shaped selectors', () => {
    const l = new SelectorMissLedger();
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    for (const s of [
      '',
      '   ',
      png,
      'data:image/png;base64,iVBOR',
      'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9w',
      '\x89PNG\r',
      'GIF89a\u0001',
    ]) {
      expect(l.record(s)).toBe(false);
    }
    expect(l.size).toBe(0);
    expect(isBlobShaped('Traceback (most recent call last):')).toBe(false);
  });

  it('counts the same output once, however often it is re-sent', () => {
    const l = new SelectorMissLedger();
    l.record('total 48', 'ck-1');
    l.record('total 48', 'ck-1');
    l.record('total 48', 'ck-2');
    expect(l.top()).toEqual([{ selector: 'total 48', count: 2 }]);
  });
});

describe('FilterActStats', () => {
  it('sums acts and saved tokens per filter and family; unique savings once per stash key', () => {
    const s = new FilterActStats();
    s.record('pytest', 'tests', 100, 'k1');
    s.record('pytest', 'tests', 100, 'k1');
    s.record('jest', 'tests', 40, 'k2');
    s.record('make', 'builds', 7);
    expect(s.snapshot()).toEqual({
      filters: {
        jest: { acts: 1, saved_tokens: 40, saved_tokens_unique: 40 },
        make: { acts: 1, saved_tokens: 7, saved_tokens_unique: 7 },
        pytest: { acts: 2, saved_tokens: 200, saved_tokens_unique: 100 },
      },
      families: {
        builds: { acts: 1, saved_tokens: 7, saved_tokens_unique: 7 },
        tests: { acts: 3, saved_tokens: 240, saved_tokens_unique: 140 },
      },
    });
  });
});
