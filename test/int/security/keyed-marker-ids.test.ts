// Marker ids are keyed per tenant (docs/security.md, marker ids): the same original gets different
// ids in two tenants and an id is not the content hash anyone could compute; two gateways sharing
// the key (one Redis, one CG_ENCRYPTION_KEY) mint the same ids, so a session moves between them
// byte-stable; and a session frozen before the switch, with unkeyed ids, keeps resolving them.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { KeyRing, LocalKeyProvider, MemoryDataKeyStore, MemoryHotStore } from '@context-guru/storage';
import { createLogger } from '../../../libs/engine/src/logger';
import { prepareRequest, type PrepareDeps } from '../../../libs/engine/src/prepare-request';
import { createTenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { markerIds, rawMessages, withoutBreakpoints } from '../../support/forwarded-bytes';
import { startGateway, type GatewayHarness } from '../../support/gateway-harness';
import { jsonScript, sha } from '../../support/scripted-model';
import { agentSteps, anthropicTurn } from '../../support/transcripts';
import { REDIS_URL, flushPrefix, uniquePrefix } from '../storage/redis-support';

const steps = agentSteps(14, 5);
/** What is stashed: each output, a JSON one as format compacted it. */
const originals = steps.map((s) => compactIfJson(s.output));
const unkeyed = new Set(originals.map((o) => sha(o).slice(0, 16)));
function compactIfJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

const body = (t: number) => JSON.stringify(anthropicTurn(steps, t));

function deps(store: MemoryHotStore, ids?: KeyRing): PrepareDeps {
  return { store, ...(ids && { ids }), clock: { now: () => Date.now() }, log: createLogger('error', () => undefined), injectMode: 'auto' };
}

async function prepare(d: PrepareDeps, tenant: string, t: number, session: string) {
  const runtime = createTenantRuntime(tenant, { preset: 'agent' }, 1);
  const input = { route: 'anthropic' as const, dialect: 'anthropic' as const, raw: body(t), tenant: runtime };
  return prepareRequest(d, { ...input, pipeline: runtime.built.pipeline, cacheMode: 'auto', sessionHeader: session, bypassHeader: false });
}

const ring = () => new KeyRing(new LocalKeyProvider(randomBytes(32)), new MemoryDataKeyStore());

describe('keyed marker ids', () => {
  it('two tenants get different ids for the same content, neither the unkeyed hash', async () => {
    const store = new MemoryHotStore();
    const d = deps(store, ring());
    const a = markerIds((await prepare(d, 'alpha', 12, 'same')).outgoing);
    const b = markerIds((await prepare(d, 'beta', 12, 'same')).outgoing);
    expect(a.size).toBeGreaterThan(3);
    expect(b.size).toBe(a.size);
    expect([...a].filter((id) => b.has(id) || unkeyed.has(id))).toEqual([]);
    // Each tenant's ids name its own originals.
    for (const id of a) expect(originals).toContain(await store.getStash('alpha', id));
    for (const id of a) expect(await store.getStash('beta', id)).toBeNull();
  });

  it('a session frozen with unkeyed ids keeps them resolvable after the switch; new ones are keyed', async () => {
    const store = new MemoryHotStore();
    const put: string[] = [];
    const putStash = store.putStash.bind(store);
    store.putStash = (tenant, session, entries) => {
      put.push(...entries.map((e) => e.id));
      return putStash(tenant, session, entries);
    };
    // Before the switch: no key ring, ids are the content hash (what older gateways stored).
    const before = await prepare(deps(store), 'alpha', 8, 'live');
    const old = markerIds(before.outgoing);
    expect(old.size).toBeGreaterThan(2);
    expect([...old].every((id) => unkeyed.has(id))).toBe(true);

    put.length = 0;
    const after = await prepare(deps(store, ring()), 'alpha', 13, 'live');
    const now = markerIds(after.outgoing);
    // Every message frozen with an old marker is forwarded again byte for byte.
    const [was, is] = [rawMessages(before.outgoing), rawMessages(after.outgoing)];
    const frozen = was.flatMap((m, i) => (m.includes('<<cg:') ? [i] : []));
    expect(frozen.length).toBeGreaterThan(2);
    for (const i of frozen) expect(withoutBreakpoints(is[i] ?? '')).toBe(withoutBreakpoints(was[i] ?? ''));
    for (const id of old) expect(now.has(id)).toBe(true);
    const fresh = [...now].filter((id) => !old.has(id));
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh.filter((id) => unkeyed.has(id))).toEqual([]);
    // The replay stashed the old originals again under their old ids (their TTL slides), and
    // every id, old or new, expands for the session that owns it.
    for (const id of old) expect(put).toContain(id);
    for (const id of now) {
      expect(originals).toContain(await store.getStash('alpha', id));
      expect(await store.owns('alpha', after.session, id)).toBe(true);
    }
  });
});

describe('two gateways sharing the key', () => {
  const admin = new Redis(REDIS_URL);
  const prefix = uniquePrefix();
  const other = uniquePrefix();
  const key = randomBytes(32).toString('base64');
  let upstream: FakeUpstream;
  let gateways: GatewayHarness[] = [];

  beforeAll(async () => {
    upstream = await startFakeUpstream(jsonScript({ expand: false }));
    const env = (p: string, k: string) => ({ REDIS_URL, REDIS_PREFIX: p, CG_ENCRYPTION_KEY: k, CONFIG: 'preset: agent\n' });
    gateways = [
      await startGateway(upstream.url, env(prefix, key)),
      await startGateway(upstream.url, env(prefix, key)),
      await startGateway(upstream.url, env(other, randomBytes(32).toString('base64'))),
    ];
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    await upstream.close();
    for (const p of [prefix, other]) await flushPrefix(admin, p);
    await admin.quit();
  });

  const send = async (g: GatewayHarness, session: string) => {
    const res = await fetch(`${g.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'x-context-guru-session': session },
      body: body(12),
    });
    expect(res.status).toBe(200);
    await res.text();
    const sent = upstream.requests[upstream.requests.length - 1];
    if (!sent) throw new Error('nothing reached the upstream');
    expect(validateProviderShape('anthropic', sent.body)).toEqual([]);
    return markerIds(sent.raw);
  };

  it('mint the same ids for the same content; an id one minted expands through the other', async () => {
    const [a, b, c] = gateways as [GatewayHarness, GatewayHarness, GatewayHarness];
    const fromA = await send(a, 'first');
    const fromB = await send(b, 'second');
    expect(fromA.size).toBeGreaterThan(3);
    expect([...fromB].sort()).toEqual([...fromA].sort());
    expect([...fromA].filter((id) => unkeyed.has(id))).toEqual([]);
    for (const id of fromA) {
      const res = await fetch(`${b.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': 'first' } });
      expect(res.status).toBe(200);
      expect(originals).toContain(await res.text());
    }
    // Another deployment (its own key and Redis prefix) names the same content otherwise.
    const fromC = await send(c, 'first');
    expect([...fromC].filter((id) => fromA.has(id))).toEqual([]);
  });
});
