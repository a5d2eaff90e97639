// The in-process hot store bounds each tenant in bytes, not only in entries: before, 10,000
// entries of any size were kept, so /compact calls of a megabyte each raised the process's memory
// for good. Past maxBytes the least recent unpinned entries go; another tenant keeps what it has.
import { MemoryHotStore } from '@context-guru/storage';
import { TtlLruCache } from '../../../libs/storage/src/memory/ttl-lru.cache';

const id = (i: number) => i.toString(16).padStart(16, '0');
const original = (i: number) => `${i}:${'x'.repeat(100_000)}`; // ≈ 200 KB as a JS string

it('keeps at most maxBytes of originals per tenant, the most recent ones', async () => {
  const store = new MemoryHotStore({ maxBytes: 2 * 1024 * 1024 });
  await store.putStash('other', 's', [{ id: id(999), text: original(999) }]);
  for (let i = 0; i < 30; i++) await store.putStash('acme', `s${i}`, [{ id: id(i), text: original(i) }]);
  const kept: number[] = [];
  for (let i = 0; i < 30; i++) if ((await store.getStash('acme', id(i))) !== null) kept.push(i);
  // Ten originals of ≈ 200 KB fit in 2 MiB; the newest are the ones kept.
  expect(kept.length).toBeGreaterThanOrEqual(9);
  expect(kept.length).toBeLessThanOrEqual(10);
  expect(kept).toEqual(Array.from({ length: kept.length }, (_, n) => 30 - kept.length + n));
  expect(await store.getStash('other', id(999))).toBe(original(999));
});

it('counts bytes through overwrites, deletes and expiry', () => {
  let t = 0;
  const cache = new TtlLruCache<string>({ ttlMs: 1000, maxEntries: 100, maxBytes: 10, sizeOf: (v) => v.length, now: () => t });
  cache.set('a', 'xxxx');
  cache.set('b', 'yyyy');
  expect(cache.bytes).toBe(8);
  cache.set('a', 'xx'); // an overwrite at once keeps its place: still the least recent
  expect(cache.bytes).toBe(6);
  cache.set('c', 'zzzzzz'); // 12 > 10: the least recent (a) goes
  expect([cache.peek('a'), cache.bytes]).toEqual([undefined, 10]);
  cache.delete('b');
  expect(cache.bytes).toBe(6);
  t = 2000;
  expect(cache.get('c')).toBeUndefined();
  expect(cache.bytes).toBe(0);
});
