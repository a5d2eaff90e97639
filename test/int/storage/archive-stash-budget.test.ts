// The archive (Postgres, PGlite) bounds each tenant's stored originals in bytes, as the Redis hot
// store does (docs/security.md, abuse bounds): a turn whose new originals would take the tenant's
// archive past the budget is refused whole and nothing of it is archived; the gateway then runs it
// again with no new original, so every marker it forwards resolves from the archive after the hot
// copy is gone. Re-puts cost nothing, another tenant has its own budget, and an erasure or the
// retention purge gives bytes back. On Postgres, replicas racing for the same room cannot both
// take it.
import { emptySnapshot } from '@context-guru/components';
import { DurableStore, MemoryHotStore, TieredHotStore, type SqlClient } from '@context-guru/storage';
import { markerIds } from '../../support/forwarded-bytes';
import { budgetedSession, entry, turn } from './budget-support';
import { openMigrated, SQL_BACKENDS, type SqlBackend } from './sql-backends';

jest.setTimeout(60_000);

const DAY = 86_400_000;

describe.each(SQL_BACKENDS)('the byte budget of the archive on %s', (_name, backend: SqlBackend) => {
  let sql: SqlClient;
  let now = Date.parse('2026-06-01T12:00:00Z');
  const open: TieredHotStore[] = [];

  beforeAll(async () => {
    sql = await openMigrated(backend);
  });
  afterAll(async () => {
    for (const s of open) await s.close();
    await backend.dispose(sql);
  });

  /** A replica: its own in-process hot store and durable store over the shared database. */
  async function replica(maxBytes: number, on: SqlClient = sql): Promise<{ store: TieredHotStore; durable: DurableStore }> {
    const durable = new DurableStore(on, { now: () => now });
    const store = new TieredHotStore(new MemoryHotStore({ ttlSeconds: 3600, maxEntries: 10_000 }), durable, {
      archiveMaxBytes: maxBytes,
      flushMs: 5,
    });
    open.push(store);
    return { store, durable };
  }
  const archived = async (tenant: string, id: string) =>
    (await sql.query('SELECT 1 FROM stash_archive WHERE tenant = $1 AND id = $2', [tenant, id])).length > 0;
  const usage = async (tenant: string) =>
    Number((await sql.query('SELECT COALESCE(sum(bytes), 0)::bigint AS n FROM stash_bytes WHERE tenant = $1', [tenant]))[0]!.n);

  it('refuses a turn whose new originals would pass the budget, archives nothing of it, and counts it', async () => {
    const { store } = await replica(10_000);
    expect(await store.commitTurn('t1', turn('s1', [entry('a1', 4000), entry('b1', 4000)]))).toBeNull();
    await store.flush();
    expect(await usage('t1')).toBe(8000);
    const refused = await store.commitTurn('t1', turn('s1', [entry('c1', 4000)]));
    expect(refused?.stashFull).toBe(true);
    await store.flush();
    expect(await archived('t1', 'c1')).toBe(false);
    expect(await store.getStash('t1', 'c1')).toBeNull();
    expect(store.health().stashRefused?.get('t1')).toBe(1);
    // Another tenant has a budget of its own.
    expect(await store.commitTurn('u1', turn('s1', [entry('c1', 4000)]))).toBeNull();
    expect(store.health().stashRefused?.get('u1')).toBeUndefined();
  });

  it('counts an archived original once, however often it is put again', async () => {
    const { store } = await replica(10_000);
    expect(await store.commitTurn('t2', turn('s1', [entry('a1', 6000)]))).toBeNull();
    await store.flush();
    // Another session stashing the same original (and this replica's memo gone: a restart).
    const { store: later } = await replica(10_000);
    for (let i = 0; i < 3; i++) expect(await later.commitTurn('t2', turn(`s${i}`, [entry('a1', 6000)]))).toBeNull();
    await later.flush();
    expect(await usage('t2')).toBe(6000);
    expect(await later.commitTurn('t2', turn('s1', [entry('b1', 3000)]))).toBeNull();
    expect((await later.commitTurn('t2', turn('s1', [entry('c1', 3000)])))?.stashFull).toBe(true);
  });

  it('writes a turn already run on a refusal past the budget', async () => {
    const { store } = await replica(5000);
    expect(await store.commitTurn('t3', turn('s1', [entry('a1', 4000)]))).toBeNull();
    expect(await store.commitTurn('t3', turn('s1', [entry('b1', 4000)], { ...emptySnapshot(), stashFull: true }))).toBeNull();
    await store.flush();
    expect(await archived('t3', 'b1')).toBe(true);
  });

  it('an erased session, then an erased tenant, give their bytes back', async () => {
    const { store } = await replica(10_000);
    expect(await store.commitTurn('t4', turn('gone', [entry('a1', 6000)]))).toBeNull();
    expect(await store.commitTurn('t4', turn('stays', [entry('b1', 3000)]))).toBeNull();
    expect((await store.commitTurn('t4', turn('next', [entry('c1', 6000)])))?.stashFull).toBe(true);
    await store.eraseSession('t4', 'gone');
    expect(await usage('t4')).toBe(3000);
    expect(await store.commitTurn('t4', turn('next', [entry('c1', 6000)]))).toBeNull();
    expect((await store.commitTurn('t4', turn('next', [entry('d1', 6000)])))?.stashFull).toBe(true);
    await store.eraseTenant('t4');
    expect(await sql.query("SELECT 1 FROM stash_bytes WHERE tenant = 't4'")).toHaveLength(0);
    expect(await store.commitTurn('t4', turn('next', [entry('d1', 6000)]))).toBeNull();
  });

  it('the retention purge drops the counters of days past retention, and the room comes back', async () => {
    const { store, durable } = await replica(10_000);
    expect(await store.commitTurn('t5', turn('s1', [entry('a1', 8000)]))).toBeNull();
    await store.flush();
    expect((await store.commitTurn('t5', turn('s1', [entry('b1', 8000)])))?.stashFull).toBe(true);
    now += 31 * DAY;
    const purged = await durable.purgeExpired();
    expect(purged?.stashBytes).toBeGreaterThan(0);
    expect(await usage('t5')).toBe(0);
    expect(await store.commitTurn('t5', turn('s1', [entry('b1', 8000)]))).toBeNull();
  });

  if (backend.name === 'postgres') {
    it('two replicas racing for the same room: together they archive no more than the budget', async () => {
      const other = await backend.second(sql);
      const a = await replica(20_000);
      const b = await replica(20_000, other);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).store.commitTurn('t6', turn(`s${i}`, [entry(`${i}x`, 4000)]))),
      );
      await Promise.all([a.store.flush(), b.store.flush()]);
      expect(results.filter((r) => r === null)).toHaveLength(5);
      expect(results.filter((r) => r?.stashFull === true)).toHaveLength(5);
      expect(await usage('t6')).toBe(20_000);
      await a.store.close();
      await b.store.close();
      await other.close();
    });
  }

  it('through the gateway: past the budget outputs go out as received, every marker resolves from the archive', async () => {
    const { steps, send } = budgetedSession('gw');
    // Unbounded: what the session's turn 8 archives, and how many markers turn 16 forwards.
    const roomy = await replica(0);
    expect(markerIds((await send(roomy.store, 8)).outgoing).size).toBeGreaterThan(0);
    await roomy.store.flush();
    const room = (await usage('gw')) + 100;
    const unbounded = markerIds((await send(roomy.store, 16)).outgoing).size;
    await roomy.store.eraseTenant('gw');
    // Room for turn 8's originals only: turn 16 is refused once, then runs with no new original.
    const tight = await replica(room);
    const first = markerIds((await send(tight.store, 8)).outgoing);
    const out = await send(tight.store, 16);
    const ids = markerIds(out.outgoing);
    expect(ids.size).toBeGreaterThan(0);
    expect(ids.size).toBeLessThan(unbounded);
    expect([...ids].every((id) => first.has(id))).toBe(true);
    expect(tight.store.health().stashRefused?.get('gw')).toBe(1);
    expect(out.report.failOpen).toBeUndefined();
    await tight.store.flush();
    expect(await usage('gw')).toBeLessThanOrEqual(room);
    // The hot copy gone (a restart): each forwarded marker still resolves from the archive.
    const restarted = await replica(room);
    for (const id of ids) expect(await restarted.store.getStash('gw', id)).not.toBeNull();
    // What was not offloaded went out as the client sent it.
    const verbatim = steps.filter((st) => out.outgoing.includes(JSON.stringify(st.output).slice(1, -1)));
    expect(verbatim.length).toBeGreaterThan(0);
  });
});
