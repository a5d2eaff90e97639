// Names derived from content are keyed per tenant (docs/security.md, keyed names): a session that
// names no id, and an explicit session's conversation alias, are no longer the SHA-256 of system
// and first user text, so a reader of Redis key names cannot confirm a guessed first message; the
// session hash traces carry is keyed too. A session started before the switch, stored under the
// unkeyed names, goes on under them: its turn record and frozen decisions are found and the
// forwarded bytes of its frozen messages stay identical (no cache bust at upgrade).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { MarkerIdSource } from '@context-guru/components';
import { KeyRing, LocalKeyProvider, MemoryDataKeyStore, MemoryHotStore, RedisHotStore, type ScopeKeys } from '@context-guru/storage';
import { createLogger } from '../../../libs/engine/src/logger';
import { prepareRequest, type PrepareDeps } from '../../../libs/engine/src/prepare-request';
import { conversationKey } from '../../../libs/engine/src/session/conversation-key';
import { sessionHash } from '../../../libs/engine/src/session/session-point';
import { createTenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { decodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { derivedSessionBase } from '../../../libs/engine/src/wire/session-key';
import { rawMessages, withoutBreakpoints } from '../../support/forwarded-bytes';
import { agentSteps, anthropicTurn } from '../../support/transcripts';
import { REDIS_URL, flushPrefix, scanKeys, uniquePrefix } from '../storage/redis-support';

const steps = agentSteps(14, 5);
const body = (t: number) => JSON.stringify(anthropicTurn(steps, t));
/** What anyone who guesses the first messages computes: the unkeyed derived session base. */
const view = decodeRequest('anthropic', body(1));
const unkeyed = derivedSessionBase(view);

const ring = () => new KeyRing(new LocalKeyProvider(randomBytes(32)), new MemoryDataKeyStore());
/** A gateway before this change: keyed marker ids, unkeyed names. */
const idsOnly = (r: KeyRing): MarkerIdSource => ({ idsFor: (t) => r.idsFor(t) });

function deps(store: PrepareDeps['store'], ids: MarkerIdSource): PrepareDeps {
  return { store, ids, clock: { now: () => Date.now() }, log: createLogger('error', () => undefined), injectMode: 'auto' };
}

async function prepare(d: PrepareDeps, tenant: string, t: number, session?: string) {
  const runtime = createTenantRuntime(tenant, { preset: 'agent' }, 1);
  const input = { route: 'anthropic' as const, dialect: 'anthropic' as const, raw: body(t), tenant: runtime };
  return prepareRequest(d, { ...input, pipeline: runtime.built.pipeline, cacheMode: 'auto', sessionHeader: session, bypassHeader: false });
}

describe('keyed session names', () => {
  const admin = new Redis(REDIS_URL);
  const prefix = uniquePrefix();
  let store: RedisHotStore;
  beforeAll(async () => {
    store = await RedisHotStore.connect({ url: REDIS_URL, prefix });
  });
  afterAll(async () => {
    await store.close();
    await flushPrefix(admin, prefix);
    await admin.quit();
  });

  it('no Redis key names the unkeyed digest of the first messages, for a derived or an explicit session', async () => {
    const r = ring();
    const d = deps(store, r);
    const derived = await prepare(d, 'alpha', 6);
    await prepare(d, 'alpha', 8);
    await prepare(d, 'alpha', 8, 'explicit-session');
    const keys = await scanKeys(admin, prefix);
    expect(keys.length).toBeGreaterThan(5);
    expect(keys.filter((k) => k.includes(unkeyed))).toEqual([]);
    // The derived session is the keyed digest, and the traced hash is keyed too.
    const names = await r.forTenant('alpha');
    expect(derived.session).toBe(`alpha:${derivedSessionBase(view, names)}`);
    expect(derived.session).not.toBe(`alpha:${unkeyed}`);
    expect(derived.report.sessionHash).toBe(names.name('trace', derived.session));
    expect(derived.report.sessionHash).not.toBe(sessionHash(derived.session));
    // Another tenant names the same content otherwise.
    const other = await prepare(d, 'beta', 6);
    expect(other.session.slice('beta:'.length)).not.toBe(derived.session.slice('alpha:'.length));
  });

  describe.each([
    ['a derived session', undefined],
    ['an explicit session (its conversation alias)', 'live'],
  ])('%s started before the switch', (_name, header) => {
    it('goes on under its unkeyed names: no bust, nothing new under the keyed ones', async () => {
      const mem = new MemoryHotStore();
      const r = ring();
      const before = await prepare(deps(mem, idsOnly(r)), 'alpha', 8, header);
      const oldConversation = conversationKey(before.session, view);
      expect(oldConversation).toContain(unkeyed);
      expect(await mem.hasTurn('alpha', oldConversation)).toBe(true);

      const after = await prepare(deps(mem, r), 'alpha', 13, header);
      expect(after.session).toBe(before.session);
      expect(after.report.failOpen).toBeUndefined();
      // Every message frozen before the switch is forwarded again byte for byte.
      const [was, is] = [rawMessages(before.outgoing), rawMessages(after.outgoing)];
      const frozen = was.flatMap((m, i) => (m.includes('<<cg:') ? [i] : []));
      expect(frozen.length).toBeGreaterThan(2);
      for (const i of frozen) expect(withoutBreakpoints(is[i] ?? '')).toBe(withoutBreakpoints(was[i] ?? ''));
      // The turn advanced the unkeyed record; no record was started under the keyed names.
      const names: ScopeKeys = await r.forTenant('alpha');
      const keyedSession = header ? before.session : `alpha:${derivedSessionBase(view, names)}`;
      expect(await mem.hasTurn('alpha', conversationKey(keyedSession, view, names))).toBe(false);
      // A session started after the switch (the same messages in a tenant that had none) is keyed.
      const fresh = await prepare(deps(mem, r), 'gamma', 3, header);
      const gamma = await r.forTenant('gamma');
      expect(fresh.session).not.toContain(unkeyed);
      expect(await mem.hasTurn('gamma', conversationKey(fresh.session, view, gamma))).toBe(true);
      expect(await mem.hasTurn('gamma', conversationKey(header ? fresh.session : `gamma:${unkeyed}`, view))).toBe(false);
    });
  });
});
