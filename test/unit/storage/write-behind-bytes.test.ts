// The write-behind queue is bounded by bytes as well as by count: while Postgres is away, large
// originals cannot pile up past WRITE_BEHIND_MAX_MB. Past either bound the oldest archive entries
// go first and are counted as dropped; a flush that hangs keeps its batch counted against the bound.
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

describe('WriteBehindQueue bytes bound', () => {
  it('drops the oldest entries past maxPendingBytes, counts them, and keeps the bytes within it', () => {
    const q = new WriteBehindQueue(fakeDurable(never), { ...NO_TIMER, maxPendingBytes: 3 * ONE });
    q.enqueueStash([entry(1), entry(2)]);
    q.enqueueStash([entry(3), entry(4), entry(5)]);
    expect(q.stats()).toMatchObject({ pendingStashes: 3, pendingStashBytes: 3 * ONE, dropped: 2 });
    expect(q.pendingStash('t', 'id-1')).toBeUndefined();
    expect(q.pendingStash('t', 'id-2')).toBeUndefined();
    expect(q.pendingStash('t', 'id-5')?.text.length).toBe(10_000);
  });

  it('small entries stay bounded by count (maxPending) as before; bytes follow what is kept', () => {
    const q = new WriteBehindQueue(fakeDurable(never), { ...NO_TIMER, maxPending: 4 });
    q.enqueueStash([1, 2, 3, 4, 5, 6].map((i) => entry(i, 10)));
    const kept = stashEntryBytes(entry(3, 10)) * 4;
    expect(q.stats()).toMatchObject({ pendingStashes: 4, pendingStashBytes: kept, dropped: 2 });
    expect(q.pendingStash('t', 'id-3')).toBeDefined();
  });

  it('an entry larger than the whole bound is not held', () => {
    const q = new WriteBehindQueue(fakeDurable(never), { ...NO_TIMER, maxPendingBytes: ONE });
    q.enqueueStash([entry(1, 50_000)]);
    expect(q.stats()).toMatchObject({ pendingStashes: 0, pendingStashBytes: 0, dropped: 1 });
  });

  it('a flush hanging on Postgres keeps its batch counted: new entries get only the room left', async () => {
    const q = new WriteBehindQueue(fakeDurable(never), { ...NO_TIMER, maxPendingBytes: 3 * ONE });
    q.enqueueStash([entry(1), entry(2)]);
    void q.flush(); // takes both; archiveStash never answers
    await new Promise((r) => setImmediate(r));
    expect(q.stats().pendingStashes).toBe(0);
    q.enqueueStash([entry(3), entry(4)]);
    expect(q.stats()).toMatchObject({ pendingStashes: 1, pendingStashBytes: ONE, dropped: 1 });
    expect(q.pendingStash('t', 'id-1')).toBeDefined(); // still readable from the flushing batch
    expect(q.pendingStash('t', 'id-4')).toBeDefined();
  });

  it('a failed flush re-queues its batch ahead of newer entries and bounds them together, oldest dropped', async () => {
    let fail = true;
    const durable = fakeDurable(async () => {
      if (fail) throw new Error('connection refused');
    });
    const q = new WriteBehindQueue(durable, { ...NO_TIMER, maxPendingBytes: 3 * ONE });
    q.enqueueStash([entry(1), entry(2), entry(3)]);
    const flushing = q.flush();
    q.enqueueStash([entry(4)]); // room: none while the batch of three is out
    await flushing;
    expect(q.stats()).toMatchObject({ failures: 1, pendingStashes: 3, pendingStashBytes: 3 * ONE });
    // Entry 4 was dropped while the batch was out (no room); the batch is back whole.
    expect(q.stats().dropped).toBe(1);
    expect(['id-1', 'id-2', 'id-3', 'id-4'].map((id) => q.pendingStash('t', id) !== undefined)).toEqual([true, true, true, false]);
    q.enqueueStash([entry(5)]);
    expect(q.pendingStash('t', 'id-1')).toBeUndefined(); // the oldest goes for the newest
    expect(q.stats().dropped).toBe(2);
    fail = false;
    await q.close();
    expect(durable.archived.map((e) => e.id)).toEqual(['id-2', 'id-3', 'id-5']);
    expect(q.stats()).toMatchObject({ pendingStashes: 0, pendingStashBytes: 0 });
  });
});
