// Postgres stalls (a partition, a hung server: connections stay open, nothing answers). A look-up
// on the request path rejects as store_unavailable after readTimeoutMs instead of holding the
// request for as long as the socket lives, the tiered store then carries on from the hot store,
// and once Postgres answers again the same store serves again with no restart.
import { DurableStore, MemoryHotStore, StorageError, TieredHotStore } from '@context-guru/storage';
import type { TcpProxy } from '../../support/tcp-proxy';
import { proxiedPostgres, type ProxiedPostgres } from './proxied-postgres';

jest.setTimeout(60_000);

const READ_TIMEOUT_MS = 300;
/** Far beyond the deadline: a look-up still pending then would have hung with the socket. */
const HUNG_MS = 10_000;

/** The call's rejection, or 'still waiting' if it neither settled nor failed within HUNG_MS. */
async function outcome(p: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting'), HUNG_MS)));
  try {
    return await Promise.race([
      p.then(
        (v) => ({ resolved: v }),
        (e: unknown) => e,
      ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function expectUnavailable(err: unknown): void {
  expect(err).toBeInstanceOf(StorageError);
  expect((err as StorageError).code).toBe('store_unavailable');
  expect((err as StorageError).message).toMatch(`postgres did not answer within ${READ_TIMEOUT_MS} ms`);
}

describe('durable store while Postgres stalls', () => {
  let pg: ProxiedPostgres;
  let proxy: TcpProxy;
  let durable: DurableStore;
  let tiered: TieredHotStore;

  beforeAll(async () => {
    pg = await proxiedPostgres('cg_stall');
    proxy = pg.proxy;
    durable = new DurableStore(pg.sql, { readTimeoutMs: READ_TIMEOUT_MS });
    tiered = new TieredHotStore(new MemoryHotStore({ ttlSeconds: 600, maxEntries: 1000 }), durable);
    await durable.archiveStash([{ tenant: 't', session: 's', id: '00000000000000aa', text: 'archived original' }]);
    await durable.saveTurns([{ tenant: 't', session: 'known', turn: { n: 4, at: 1_000, ttlMs: 300_000 } }]);
  });
  afterAll(async () => {
    pg.proxy.resume();
    await tiered.close();
    await pg.dispose();
  });

  it('request-path look-ups reject as store_unavailable instead of hanging', async () => {
    proxy.stall();
    expectUnavailable(await outcome(durable.loadTurn('t', 'known')));
    expectUnavailable(await outcome(durable.loadCheckpoint('t', 'known', ['c'.repeat(24)])));
    expectUnavailable(await outcome(durable.getArchivedStash('t', '00000000000000aa')));
    expectUnavailable(await outcome(durable.owns('t', 's', '00000000000000aa')));
    expectUnavailable(await outcome(durable.ping()));
    // The tiered store answers the request from the hot store: an unseen turn is taken as the first.
    expect(await outcome(tiered.advanceTurn('t', 'unseen', { n: 1, at: 2_000, ttlMs: 300_000 }))).toEqual({ resolved: null });
  });

  it('serves again once Postgres answers, with no restart', async () => {
    proxy.resume();
    expect(await outcome(durable.getArchivedStash('t', '00000000000000aa'))).toEqual({ resolved: 'archived original' });
    expect(await outcome(durable.loadTurn('t', 'known'))).toMatchObject({ resolved: { n: 4 } });
  });
});
