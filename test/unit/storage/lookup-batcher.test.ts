// LookupBatcher: look-ups asked together share one run, each caller gets its own answer, and a
// failed run fails each of its callers with the run's error.
import { LookupBatcher } from '../../../libs/storage/src/sql/lookup-batcher';

/** A run that records its batches and answers when the test releases it. */
function gatedRun() {
  const batches: number[][] = [];
  const gates: Array<() => void> = [];
  const run = async (asks: readonly number[]) => {
    batches.push([...asks]);
    await new Promise<void>((r) => gates.push(r));
    return asks.map((a) => a * 10);
  };
  const release = async () => {
    while (gates.length === 0) await new Promise((r) => setImmediate(r));
    gates.shift()!();
  };
  return { batches, run, release };
}

describe('LookupBatcher', () => {
  it('look-ups asked in the same tick go out as one run, answered in their order', async () => {
    const asked: number[][] = [];
    const b = new LookupBatcher(async (asks: readonly number[]) => {
      asked.push([...asks]);
      return asks.map((a) => `answer ${a}`);
    });
    const out = await Promise.all([1, 2, 3, 2].map((n) => b.load(n)));
    expect(out).toEqual(['answer 1', 'answer 2', 'answer 3', 'answer 2']);
    expect(asked).toEqual([[1, 2, 3, 2]]);
  });

  it('a lone look-up goes out at once; those asked while it is in flight share the next run', async () => {
    const g = gatedRun();
    const b = new LookupBatcher(g.run);
    const first = b.load(1);
    await new Promise((r) => setImmediate(r));
    expect(g.batches).toEqual([[1]]);
    const later = [b.load(2), b.load(3)];
    await new Promise((r) => setImmediate(r));
    const more = b.load(4);
    expect(g.batches).toEqual([[1]]);
    await g.release();
    expect(await first).toBe(10);
    await g.release();
    expect(await Promise.all([...later, more])).toEqual([20, 30, 40]);
    expect(g.batches).toEqual([[1], [2, 3, 4]]);
  });

  it('runs at most maxInFlight at once and at most maxBatch look-ups per run', async () => {
    const g = gatedRun();
    const b = new LookupBatcher(g.run, { maxBatch: 2, maxInFlight: 2 });
    const all = Promise.all([1, 2, 3, 4, 5].map((n) => b.load(n)));
    await new Promise((r) => setImmediate(r));
    expect(g.batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    await g.release();
    await g.release();
    await g.release();
    expect(await all).toEqual([10, 20, 30, 40, 50]);
    expect(g.batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('a failed run rejects each of its look-ups with its error; the next run is unaffected', async () => {
    const down = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    let fail = true;
    const b = new LookupBatcher(async (asks: readonly number[]) => {
      if (fail) throw down;
      return asks.map((a) => a + 1);
    });
    const failed = await Promise.allSettled([1, 2, 3].map((n) => b.load(n)));
    expect(failed).toEqual([1, 2, 3].map(() => ({ status: 'rejected', reason: down })));
    fail = false;
    expect(await b.load(7)).toBe(8);
  });

  it('a run that throws before its first await fails its look-ups the same way', async () => {
    const b = new LookupBatcher<number, number>(() => {
      throw new TypeError('bad parameter');
    });
    await expect(Promise.all([b.load(1), b.load(2)])).rejects.toThrow('bad parameter');
    await expect(b.load(3)).rejects.toThrow('bad parameter');
  });
});
