// commitTurn against the real Redis (and Postgres behind it): a turn's writes in one round trip,
// guarded by the content keys its run could not ask for up front. When the session holds a
// decision, lost mark or kept mark for one of them, nothing at all is written and that knowledge
// comes back; a tiered store whose hot state vanished asks the checkpoint first.
import { emptySnapshot, type SessionSnapshot, type TurnWrites } from '@context-guru/components';
import { DurableStore, RedisHotStore, TieredHotStore, migrate, type SqlClient } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { uniqueTenant, writes } from '../../unit/storage/hot-store.contract';
import { REDIS_URL, expireValues, flushPrefix, uniquePrefix } from './redis-support';
import { postgresBackend } from './sql-backends';

jest.setTimeout(30_000);

const admin = new Redis(REDIS_URL);
const prefixes: string[] = [];
const closing: { close(): Promise<void> }[] = [];
let sql: SqlClient;

beforeAll(async () => {
  sql = await postgresBackend.open();
  await migrate(sql);
});
afterAll(async () => {
  for (const s of closing) await s.close();
  for (const p of prefixes) await flushPrefix(admin, p);
  await admin.quit();
  await postgresBackend.dispose(sql);
});

async function redis(): Promise<{ hot: RedisHotStore; prefix: string }> {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  const hot = await RedisHotStore.connect({ url: REDIS_URL, prefix });
  closing.push(hot);
  return { hot, prefix };
}

const ck = (i: number) => i.toString(16).padStart(24, '0');
const seen = (s: Partial<SessionSnapshot> = {}): SessionSnapshot => ({ ...emptySnapshot(), offloaded: true, ...s });

/** A turn stashing `id-7`, deciding on ck(2) and rewriting index 3, guarded by `unknown`. */
function turn(unknown: string[], s = seen()): TurnWrites {
  return {
    session: 'sess',
    conversation: 'conv',
    stash: [{ id: 'id-7', text: 'original seven' }],
    writes: writes({ [`mask:${ck(2)}`]: 'new decision' }, true),
    rewritten: [3],
    unknown,
    seen: s,
  };
}

/** What the turn would have written, as the store holds it now. */
async function written(hot: RedisHotStore, T: string) {
  const rw = await admin.get(`${hot.tenantPrefix(T)}turnrw:conv`);
  return {
    stash: await hot.getStash(T, 'id-7'),
    owns: await hot.owns(T, 'sess', 'id-7'),
    decision: (await hot.loadSession(T, 'sess', [ck(2)])).frozen.get(`mask:${ck(2)}`),
    rw,
  };
}

describe('RedisHotStore.commitTurn', () => {
  it('writes everything in one round trip when the store knows nothing about the unknown keys', async () => {
    const { hot } = await redis();
    const T = uniqueTenant();
    const before = hot.roundTrips;
    expect(await hot.commitTurn(T, turn([ck(9)]))).toBeNull();
    expect(hot.roundTrips - before).toBe(1);
    expect(await written(hot, T)).toEqual({ stash: 'original seven', owns: true, decision: 'new decision', rw: '3' });
  });

  it('writes nothing and returns the decision when an unknown key holds one (another replica decided it)', async () => {
    const { hot } = await redis();
    const T = uniqueTenant();
    await hot.commitSession(T, 'sess', writes({ [`mask:${ck(5)}`]: 'decided elsewhere' }, true));
    const before = hot.roundTrips;
    const known = await hot.commitTurn(T, turn([ck(5), ck(9)]));
    expect(hot.roundTrips - before).toBe(1);
    expect([...known!.frozen]).toEqual([[`mask:${ck(5)}`, 'decided elsewhere']]);
    expect(await written(hot, T)).toEqual({ stash: null, owns: false, decision: undefined, rw: null });
  });

  it('a kept mark or a lost decision on an unknown key also stops the write, and a newly lost one is counted once', async () => {
    const { hot, prefix } = await redis();
    const T = uniqueTenant();
    await hot.markKept(T, [ck(6)]);
    expect([...(await hot.commitTurn(T, turn([ck(6)])))!.kept]).toEqual([ck(6)]);
    await hot.commitSession(T, 'sess', writes({ [`mask:${ck(8)}`]: 'r8' }, true));
    await expireValues(admin, prefix); // the value goes, the index remembers it
    const known = await hot.commitTurn(T, turn([ck(8)]));
    expect([...known!.lost]).toEqual([`mask:${ck(8)}`]);
    expect(hot.health().frozenDropped).toBe(1);
    expect(await hot.getStash(T, 'id-7')).toBeNull();
  });

  it('without unknown keys the guard is off: the same writes, one round trip, and a repaired lost slot is counted', async () => {
    const { hot, prefix } = await redis();
    const T = uniqueTenant();
    await hot.commitSession(T, 'sess', writes({ [`mask:${ck(2)}`]: 'old' }, true));
    await expireValues(admin, prefix);
    await hot.loadSession(T, 'sess', [ck(2)]); // marks it lost
    const before = hot.roundTrips;
    expect(await hot.commitTurn(T, turn([]))).toBeNull();
    expect(hot.roundTrips - before).toBe(1);
    expect(hot.health().frozenRepaired).toBe(1);
    expect(await written(hot, T)).toEqual({ stash: 'original seven', owns: true, decision: 'new decision', rw: '3' });
  });
});

describe('TieredHotStore.commitTurn', () => {
  async function tiered() {
    const { hot, prefix } = await redis();
    const store = new TieredHotStore(hot, new DurableStore(sql), { flushMs: 10 });
    closing.unshift(store);
    return { store, hot, prefix };
  }

  it('a flagged session: one guarded Redis round trip, and the durable copy follows behind', async () => {
    const { store, hot } = await tiered();
    const T = uniqueTenant();
    const before = hot.roundTrips;
    expect(await store.commitTurn(T, turn([ck(9)]))).toBeNull();
    expect(hot.roundTrips - before).toBe(1);
    await store.flush();
    expect((await store.durable.loadCheckpoint(T, 'sess', [ck(2)])).frozen.get(`mask:${ck(2)}`)).toBe('new decision');
    expect(await store.durable.getArchivedStash(T, 'id-7')).toBe('original seven');
  });

  it('a session seen without flags whose hot state vanished: the checkpoint decision comes back, nothing is written', async () => {
    const { store, hot, prefix } = await tiered();
    const T = uniqueTenant();
    await store.commitSession(T, 'sess', writes({ [`mask:${ck(5)}`]: 'checkpointed' }));
    await store.flush();
    await flushPrefix(admin, prefix);
    const known = await store.commitTurn(T, turn([ck(5)], seen({ offloaded: false })));
    expect(known?.frozen.get(`mask:${ck(5)}`)).toBe('checkpointed');
    expect(await admin.get(`${hot.tenantPrefix(T)}s:id-7`)).toBeNull();
    expect(await admin.get(`${hot.tenantPrefix(T)}turnrw:conv`)).toBeNull();
  });

  it('the hot store knows a decision the run missed: it comes back completed, nothing is written', async () => {
    const { store, hot } = await tiered();
    const T = uniqueTenant();
    await store.commitSession(T, 'sess', writes({ [`mask:${ck(5)}`]: 'hot' }, true));
    const known = await store.commitTurn(T, turn([ck(5)]));
    expect(known?.frozen.get(`mask:${ck(5)}`)).toBe('hot');
    expect(await admin.get(`${hot.tenantPrefix(T)}s:id-7`)).toBeNull();
  });
});
