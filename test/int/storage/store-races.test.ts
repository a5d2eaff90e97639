// Two windows in the tiered store, against the real Redis and Postgres. A write-behind flush takes
// its batch off the queue before the archive statement runs: a hot loss in that window must still
// find the batch's writes. And a session whose hot state was rebuilt from the checkpoint by a
// replica that asked only its own keys must still come back complete on a replica that asks about
// a key none of them had learned (a Reformat's rewritten text).
import { emptySnapshot, type TurnWrites } from '@context-guru/components';
import { DurableStore, RedisHotStore, TieredHotStore, migrate, type ArchivedStash, type SqlClient } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { uniqueTenant, writes } from '../../unit/storage/hot-store.contract';
import { REDIS_URL, flushPrefix, uniquePrefix } from './redis-support';
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

/** A durable store whose archive statement waits until `release()` (the flush's first statement). */
class HeldArchive extends DurableStore {
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  started: Promise<void> | undefined;
  private began: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
    this.started = new Promise((r) => (this.began = r));
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  override async archiveStash(batch: readonly ArchivedStash[]): Promise<void> {
    const gate = this.gate;
    this.began?.();
    if (gate) await gate;
    return super.archiveStash(batch);
  }
}

async function replica(prefix: string, durable: DurableStore): Promise<TieredHotStore> {
  const hot = await RedisHotStore.connect({ url: REDIS_URL, prefix });
  const store = new TieredHotStore(hot, durable, { flushMs: 60_000 });
  closing.unshift(store);
  return store;
}

function newPrefix(): string {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  return prefix;
}

const ck = (i: number) => i.toString(16).padStart(24, '0');

describe('a write-behind flush in flight', () => {
  it('still answers for the writes it took while its archive statement runs', async () => {
    const prefix = newPrefix();
    const durable = new HeldArchive(sql);
    const store = await replica(prefix, durable);
    const T = uniqueTenant();
    await store.advanceTurn(T, 'conv', { n: 3, at: 1000, ttlMs: 300_000 });
    await store.flush();
    await store.advanceTurn(T, 'conv', { n: 5, at: 2000, ttlMs: 300_000 });
    await store.recordRewrites(T, 'conv', [4]);
    await store.putStash(T, 'sess', [{ id: 'abcdef0123456789', text: 'the original' }]);
    await store.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: 'frozen one' }, true));

    durable.hold();
    const flushing = store.flush();
    await durable.started;
    await flushPrefix(admin, prefix); // the hot copy goes while the batch is off the queue, unwritten
    try {
      expect(await store.getStash(T, 'abcdef0123456789')).toBe('the original');
      expect(await store.owns(T, 'sess', 'abcdef0123456789')).toBe(true);
      expect((await store.loadSession(T, 'sess', [ck(1)])).frozen.get(`mask:${ck(1)}`)).toBe('frozen one');
      expect(await store.advanceTurn(T, 'conv', { n: 7, at: 3000, ttlMs: 300_000 })).toEqual({
        n: 5,
        at: 2000,
        ttlMs: 300_000,
        rewritten: [4],
      });
    } finally {
      durable.release();
      await flushing;
    }
  });
});

describe('a session rebuilt hot from the checkpoint', () => {
  it('comes back whole, so a replica asking about a key nobody learned finds its decision', async () => {
    const prefix = newPrefix();
    const durable = new DurableStore(sql);
    const [a, c, b] = [await replica(prefix, durable), await replica(prefix, durable), await replica(prefix, durable)];
    const T = uniqueTenant();
    // Replica A decided on the message's key and on the key of the text a Reformat made of it.
    await a.commitSession(T, 'sess', writes({ [`mask:${ck(1)}`]: 'message decision', [`mask:${ck(2)}`]: 'rewritten decision' }, true));
    await a.flush();
    await flushPrefix(admin, prefix); // Redis restarted empty
    // Replica C serves the next turn and asks only the message's key: the session is flagged hot again.
    expect((await c.loadSession(T, 'sess', [ck(1)])).offloaded).toBe(true);
    // Replica B never learned ck(2): its load sees a flagged session, its run meets ck(2) unknown.
    const seen = await b.loadSession(T, 'sess', [ck(1)]);
    expect(seen.offloaded).toBe(true);
    const turn: TurnWrites = {
      session: 'sess',
      conversation: 'sess',
      stash: [{ id: '0123456789abcdef', text: 'new original' }],
      writes: writes({ [`mask:${ck(2)}`]: 'a different decision' }),
      unknown: [ck(2)],
      seen: { ...emptySnapshot(), ...seen },
    };
    const known = await b.commitTurn(T, turn);
    expect(known?.frozen.get(`mask:${ck(2)}`)).toBe('rewritten decision');
    expect((await b.loadSession(T, 'sess', [ck(2)])).frozen.get(`mask:${ck(2)}`)).toBe('rewritten decision');
  });
});
