// Postgres unreachable long enough that the write-behind queue fills with originals: none of
// them is dropped (the hot copy may be evicted, and a marker already forwarded names it), and a
// new turn's originals are refused at the source — the engine runs the turn again with a stash
// that takes nothing new, so it forwards no new marker, and the refusal is counted in
// stash_refused. Every marker forwarded before still resolves, from the hot store or the queue.
import { DurableStore, MemoryHotStore, TieredHotStore } from '@context-guru/storage';
import { markerIds } from '../../support/forwarded-bytes';
import { budgetedSession } from './budget-support';
import { proxiedPostgres, type ProxiedPostgres } from './proxied-postgres';

jest.setTimeout(60_000);

/** No timer flush during the test: each flush attempt is one the test makes (and sees fail). */
const NO_TIMER = 3_600_000;

describe('write-behind queue full of originals while Postgres is unreachable', () => {
  let pg: ProxiedPostgres;
  const open: TieredHotStore[] = [];

  beforeAll(async () => {
    pg = await proxiedPostgres('cg_wbfull');
  });
  afterAll(async () => {
    await pg.proxy.restore();
    for (const s of open) await s.close();
    await pg.sql.close();
    await pg.dispose();
  });

  /** A gateway's store: an in-process hot store that evicts past `hotBytes`, Postgres behind. */
  function gatewayStore(maxPendingBytes: number, hotBytes?: number): TieredHotStore {
    const hot = new MemoryHotStore({ ttlSeconds: 3600, maxEntries: 10_000, ...(hotBytes && { maxBytes: hotBytes }) });
    const store = new TieredHotStore(hot, new DurableStore(pg.sql, { readTimeoutMs: 500 }), { flushMs: NO_TIMER, maxPendingBytes });
    open.push(store);
    return store;
  }

  it('refuses a new turn its originals (no new marker) and every earlier marker still resolves', async () => {
    await pg.proxy.cut();
    const { send } = budgetedSession('wb');
    // Unbounded: what turn 8 queues, and how many markers turn 16 forwards.
    const roomy = gatewayStore(1 << 30);
    expect(markerIds((await send(roomy, 8)).outgoing).size).toBeGreaterThan(0);
    const turn8Bytes = roomy.queueStats().pendingStashBytes;
    const unbounded = markerIds((await send(roomy, 16)).outgoing).size;

    // Room in the queue for turn 8's originals only; the hot store keeps about half of them.
    const tight = gatewayStore(turn8Bytes + 100, Math.floor(turn8Bytes / 2));
    const first = markerIds((await send(tight, 8)).outgoing);
    await tight.flush(); // Postgres refuses the connection: the batch is queued again, whole
    expect(tight.queueStats()).toMatchObject({ failures: 1, pendingStashBytes: turn8Bytes });

    const out = await send(tight, 16);
    const ids = markerIds(out.outgoing);
    expect(ids.size).toBeGreaterThan(0);
    expect(ids.size).toBeLessThan(unbounded);
    expect([...ids].every((id) => first.has(id))).toBe(true); // no new marker
    expect(tight.health().stashRefused?.get('wb')).toBe(1);
    expect(tight.queueStats()).toMatchObject({ refused: 1, pendingStashBytes: turn8Bytes });

    // The hot store evicted some of turn 8's originals; each still resolves (from the queue).
    const hotHeld = await Promise.all([...first].map((id) => tight.hot.getStash('wb', id)));
    expect(hotHeld.some((t) => t === null)).toBe(true);
    for (const id of first) expect(await tight.getStash('wb', id)).not.toBeNull();
  });
});
