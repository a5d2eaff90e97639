// A client re-sending one request advances its turn to the same count, with the same rewrites,
// over and over. Where this process is the database's only writer (PGlite), the durable row is
// then written again only once its `at` is TURN_AT_SLACK_MS old, so such a replay costs no
// statement per flush; the row read back after a hot loss is at most that much behind. On a
// shared Postgres (another replica may have written the row since) every turn is written.
import { DurableStore, MemoryHotStore, TieredHotStore, type SqlClient } from '@context-guru/storage';
import { TURN_AT_SLACK_MS } from '../../../libs/storage/src/turn-coalescer';
import { SQL_BACKENDS, openMigrated } from './sql-backends';

describe.each(SQL_BACKENDS)('replayed turns on %s', (name, backend) => {
  let sql: SqlClient;
  beforeAll(async () => {
    sql = await openMigrated(backend);
  });
  afterAll(() => backend.dispose(sql));

  it(name === 'pglite' ? 'writes the row again only past the slack' : 'writes every turn', async () => {
    const durable = new DurableStore(sql);
    const saves = jest.spyOn(durable, 'saveTurns');
    const store = new TieredHotStore(new MemoryHotStore(), durable, { flushMs: 10_000 });
    const start = 1_800_000_000_000;
    let last = start;
    for (let i = 0; i < 40; i++) {
      last = start + i * 250; // 10 s of turns, one every 250 ms
      await store.advanceTurn('t', 'conv', { n: 9, at: last, ttlMs: 300_000 });
      await store.recordRewrites('t', 'conv', [2, 4]);
      await store.flush();
    }
    const written = saves.mock.calls.length;
    if (name === 'pglite') expect(written).toBe(Math.ceil((last - start + 1) / TURN_AT_SLACK_MS));
    else expect(written).toBe(40);
    // After a hot loss, the turn comes back from the durable row: same count and rewrites, `at` within the slack.
    const after = new TieredHotStore(new MemoryHotStore(), durable);
    const prev = await after.advanceTurn('t', 'conv', { n: 10, at: last + 1, ttlMs: 300_000 });
    expect(prev).toMatchObject({ n: 9, ttlMs: 300_000, rewritten: [2, 4] });
    expect(last - prev!.at).toBeLessThan(TURN_AT_SLACK_MS);
    await after.close();
    await store.close();
  });
});
