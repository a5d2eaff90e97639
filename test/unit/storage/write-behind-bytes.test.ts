// The write-behind queue is bounded by bytes as well as by count, and its drop policy keeps every
// marker resolvable: queued originals are never dropped; past the bound the re-derivable writes
// (turn writes, then checkpoints) go first, oldest session first; once originals alone fill it,
// admitsStash says no and the caller refuses the turn's new originals. A flush that hangs keeps
// its batch counted against the bound.
import type { DurableStore } from '@context-guru/storage';
import { WriteBehindQueue, stashEntryBytes, type ArchivedStash } from '@context-guru/storage';

/** A durable store whose archive writes fail, hang or succeed as the test says. */
function fakeDurable(archive: (rows: readonly ArchivedStash[]) => Promise<void>): DurableStore & { archived: ArchivedStash[] } {
  const archived: ArchivedStash[] = [];
  const store = {
    archived,
    sql: { exclusive: false },
    archiveStash: async (rows: readonly ArchivedStash[]) => {
      await archive(rows);
      archived.push(...rows);
    },
    saveCheckpoints: async () => undefined,
    markKept: async () => undefined,
    saveTurns: async () => undefined,
  };
  return store as unknown as DurableStore & { archived: ArchivedStash[] };
}

const entry = (i: number, chars = 10_000): ArchivedStash => ({ tenant: 't', session: 's', id: `id-${i}`, text: 'x'.repeat(chars) });
const ONE = stashEntryBytes(entry(0));
const never = () => new Promise<void>(() => undefined);
/** Long enough that no timer flush runs during a test: flushes happen when the test calls them. */
const NO_TIMER = { flushMs: 3_600_000 };
const turn = (n: number) => ({ n, at: n * 1000, ttlMs: 300_000, rewritten: [] });
/** A checkpoint of about `chars` characters for session `s`. */
const checkpoint = (q: WriteBehindQueue, s: string, chars: number) =>
  q.enqueueCheckpoint('t', s, new Map([['slot', 'r'.repeat(chars)]]), false);

describe('WriteBehindQueue bytes bound and drop policy', () => {
  it('never drops a queued original: past the bound they are all kept and readable', () => {
    const q = new WriteBehindQueue(fakeDurable(never), { ...NO_TIMER, maxPendingBytes: 3 * ONE });
    q.enqueueStash([entry(1), entry(2)]);
    q.enqueueStash([entry(3), entry(4), entry(5)]); // a re-put past the bound (no admission asked)
    expect(q.stats()).toMatchObject({ pendingStashes: 5, pendingStashBytes: 5 * ONE, dropped: { checkpoints: 0, turns: 0 } });
    for (const i of [1, 2, 3, 4, 5]) expect(q.pendingStash('t', `id-${i}`)?.text.length).toBe(10_000);
  });

  it('admitsStash says no once originals fill the bytes bound, and counts the refusal', () => {
    const q = new WriteBehindQueue(fakeDurable(never), { ...NO_TIMER, maxPendingBytes: 3 * ONE });
    expect(q.admitsStash([entry(1), entry(2)])).toBe(true);
    q.enqueueStash([entry(1), entry(2)]);
    expect(q.admitsStash([entry(3)])).toBe(true);
    q.enqueueStash([entry(3)]);
    expect(q.admitsStash([entry(4)])).toBe(false);
    expect(q.admitsStash([entry(5, 10)])).toBe(false); // even a small one: the bound is reached
    expect(q.stats()).toMatchObject({ pendingStashes: 3, refused: 2 });
  });

  it('admitsStash says no past the count bound (maxPending) as well', () => {
    const q = new WriteBehindQueue(fakeDurable(never), { ...NO_TIMER, maxPending: 4 });
    q.enqueueStash([1, 2, 3].map((i) => entry(i, 10)));
    expect(q.admitsStash([entry(4, 10)])).toBe(true);
    expect(q.admitsStash([entry(4, 10), entry(5, 10)])).toBe(false);
  });

  it('an entry larger than the whole bound is refused, not queued then dropped', () => {
    const q = new WriteBehindQueue(fakeDurable(never), { ...NO_TIMER, maxPendingBytes: ONE });
    expect(q.admitsStash([entry(1, 50_000)])).toBe(false);
  });

  it('re-derivable writes take no room from originals: they are dropped first, turn writes before checkpoints', () => {
    const q = new WriteBehindQueue(fakeDurable(never), { ...NO_TIMER, maxPendingBytes: 4 * ONE });
    checkpoint(q, 'old', 9_000);
    checkpoint(q, 'new', 9_000);
    q.enqueueTurn('t', 'a', turn(1));
    q.enqueueTurn('t', 'b', turn(2));
    expect(q.stats().pendingDerivedBytes).toBeGreaterThan(18_000);
    // The derived writes hold about two entries' worth: originals are still admitted in full.
    expect(q.admitsStash([entry(1), entry(2), entry(3)])).toBe(true);
    q.enqueueStash([entry(1), entry(2), entry(3)]);
    // Past the bound: both turn writes went first, then the oldest checkpoint; the newest fits.
    expect(q.stats()).toMatchObject({ pendingStashes: 3, pendingCheckpoints: 1, dropped: { turns: 2, checkpoints: 1 } });
    expect(q.pendingTurn('t', 'a')).toBeUndefined();
    expect(q.pendingCheckpoint('t', 'old')).toBeUndefined();
    expect(q.pendingCheckpoint('t', 'new')).toBeDefined();
    q.enqueueStash([entry(4)]);
    expect(q.stats()).toMatchObject({
      pendingStashes: 4,
      pendingCheckpoints: 0,
      pendingDerivedBytes: 0,
      dropped: { turns: 2, checkpoints: 2 },
    });
    expect(q.admitsStash([entry(5)])).toBe(false);
    for (const i of [1, 2, 3, 4]) expect(q.pendingStash('t', `id-${i}`)).toBeDefined();
  });

  it('a flush hanging on Postgres keeps its batch counted: new originals get only the room left', async () => {
    const q = new WriteBehindQueue(fakeDurable(never), { ...NO_TIMER, maxPendingBytes: 3 * ONE });
    q.enqueueStash([entry(1), entry(2)]);
    void q.flush(); // takes both; archiveStash never answers
    await new Promise((r) => setImmediate(r));
    expect(q.stats().pendingStashes).toBe(0);
    expect(q.admitsStash([entry(3), entry(4)])).toBe(false);
    expect(q.admitsStash([entry(3)])).toBe(true);
    q.enqueueStash([entry(3)]);
    expect(q.admitsStash([entry(4)])).toBe(false);
    expect(q.pendingStash('t', 'id-1')).toBeDefined(); // still readable from the flushing batch
    expect(q.pendingStash('t', 'id-3')).toBeDefined();
  });

  it('a failed flush re-queues its batch ahead of newer entries and drops none of them', async () => {
    let fail = true;
    const durable = fakeDurable(async () => {
      if (fail) throw new Error('connection refused');
    });
    const q = new WriteBehindQueue(durable, { ...NO_TIMER, maxPendingBytes: 3 * ONE });
    q.enqueueStash([entry(1), entry(2), entry(3)]);
    q.enqueueTurn('t', 's', turn(1));
    const flushing = q.flush();
    q.enqueueStash([entry(4)]); // a re-put while the batch is out: kept too
    await flushing;
    expect(q.stats()).toMatchObject({ failures: 1, pendingStashes: 4, pendingStashBytes: 4 * ONE, dropped: { turns: 1, checkpoints: 0 } });
    fail = false;
    await q.close();
    expect(durable.archived.map((e) => e.id)).toEqual(['id-1', 'id-2', 'id-3', 'id-4']);
    expect(q.stats()).toMatchObject({ pendingStashes: 0, pendingStashBytes: 0 });
  });
});
