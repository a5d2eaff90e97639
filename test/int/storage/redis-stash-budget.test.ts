// The Redis hot store bounds each tenant's stored originals in bytes (docs/security.md, abuse
// bounds): a turn whose new originals do not fit is refused whole and nothing of it is written; the
// gateway then runs the turn again with a stash that takes no new original, so the outputs go out
// as received and every marker forwarded resolves. Re-putting a stored original costs nothing, a
// turn already run on a refusal is written, erasing a session gives its bytes back.
import { emptySnapshot } from '@context-guru/components';
import { RedisHotStore } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { markerIds } from '../../support/forwarded-bytes';
import { budgetedSession, entry, turn } from './budget-support';
import { REDIS_URL, flushPrefix, uniquePrefix } from './redis-support';

const admin = new Redis(REDIS_URL);
const open: Array<{ store: RedisHotStore; prefix: string }> = [];

async function store(maxBytes: number): Promise<RedisHotStore> {
  const prefix = uniquePrefix();
  const s = await RedisHotStore.connect({ url: REDIS_URL, prefix, maxBytes });
  open.push({ store: s, prefix });
  return s;
}

afterAll(async () => {
  for (const o of open) {
    await o.store.close();
    await flushPrefix(admin, o.prefix);
  }
  await admin.quit();
});

describe('the byte budget of the Redis hot store', () => {
  it('refuses a turn whose new originals do not fit, writes nothing of it, and counts it', async () => {
    const s = await store(10_000);
    expect(await s.commitTurn('t', turn('s1', [entry('a1', 4000), entry('b1', 4000)]))).toBeNull();
    const refused = await s.commitTurn('t', turn('s1', [entry('c1', 4000)]));
    expect(refused?.stashFull).toBe(true);
    expect(await s.getStash('t', 'c1')).toBeNull();
    expect(await s.owns('t', 's1', 'c1')).toBe(false);
    expect(s.health().stashRefused?.get('t')).toBe(1);
    // Another tenant has a budget of its own.
    expect(await s.commitTurn('u', turn('s1', [entry('c1', 4000)]))).toBeNull();
    expect(s.health().stashRefused?.get('u')).toBeUndefined();
  });

  it('counts a stored original once however often a replay puts it again', async () => {
    const s = await store(10_000);
    expect(await s.commitTurn('t', turn('s1', [entry('a1', 6000)]))).toBeNull();
    for (let i = 0; i < 5; i++) expect(await s.commitTurn('t', turn('s1', [entry('a1', 6000)]))).toBeNull();
    expect(await s.commitTurn('t', turn('s1', [entry('b1', 3000)]))).toBeNull();
    expect((await s.commitTurn('t', turn('s1', [entry('c1', 3000)])))?.stashFull).toBe(true);
  });

  it('writes a turn already run on a refusal, and a lone putStash, past the budget', async () => {
    const s = await store(5000);
    expect(await s.commitTurn('t', turn('s1', [entry('a1', 4000)]))).toBeNull();
    expect(await s.commitTurn('t', turn('s1', [entry('b1', 4000)], { ...emptySnapshot(), stashFull: true }))).toBeNull();
    await s.putStash('t', 's1', [entry('c1', 4000)]);
    for (const id of ['a1', 'b1', 'c1']) expect(await s.getStash('t', id)).not.toBeNull();
  });

  it('gives an erased session its bytes back', async () => {
    const s = await store(10_000);
    expect(await s.commitTurn('t', turn('gone', [entry('a1', 8000)]))).toBeNull();
    expect((await s.commitTurn('t', turn('next', [entry('b1', 8000)])))?.stashFull).toBe(true);
    await s.eraseSession('t', 'gone');
    expect(await s.commitTurn('t', turn('next', [entry('b1', 8000)]))).toBeNull();
  });

  it('through the gateway: past the budget outputs go out as received, every marker resolves', async () => {
    const { steps, send } = budgetedSession('t');
    const roomy = await send(await store(0), 16);
    const unbounded = markerIds(roomy.outgoing).size;
    expect(unbounded).toBeGreaterThan(4);
    // Room for a few originals only: the turn is refused once, then runs with no new original.
    const tight = await store(6000);
    const out = await send(tight, 16);
    const ids = markerIds(out.outgoing);
    expect(ids.size).toBeLessThan(unbounded);
    expect(tight.health().stashRefused?.get('t')).toBe(1);
    expect(out.report.failOpen).toBeUndefined();
    for (const id of ids) expect(await tight.getStash('t', id)).not.toBeNull();
    // What was not offloaded went out as the client sent it.
    const kept = steps.filter((st) => out.outgoing.includes(JSON.stringify(st.output).slice(1, -1)));
    expect(kept.length).toBeGreaterThan(0);
  });
});
