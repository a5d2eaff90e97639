// A gateway on the real Redis and Postgres with the real admin API beside it, for shadow
// evaluation: tenant `shadowed` serves the `active` document with the `candidate` document's
// stored version in shadow; tenant `twin` serves the same active document with no shadow; tenant
// `candidate` serves the candidate for real. The same sessions replayed through all three say
// whether shadow changed a forwarded byte (shadowed vs twin), what the candidate would have saved
// (shadow figures) and what it saves when it is the active config (candidate's own /stats).
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createAdminServer } from '@context-guru/admin';
import { stashId, type PipelineDocument } from '@context-guru/components';
import { statsDocument } from '../../apps/gateway/src/ops/stats-document';
import { createControlSeed, type ControlSeed } from './control-seed';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream';
import { startGateway, type GatewayHarness } from './gateway-harness';
import { jsonScript } from './scripted-model';
import { REDIS_URL, flushPrefix, scanKeys, uniquePrefix } from '../int/storage/redis-support';

type Json = Record<string, unknown>;
export type RigDialect = 'openai' | 'anthropic' | 'responses';
const RIG_TENANTS = ['shadowed', 'twin', 'candidate'] as const;
type RigTenant = (typeof RIG_TENANTS)[number];

export interface ShadowRig {
  gateway: GatewayHarness;
  upstream: FakeUpstream;
  seed: ControlSeed;
  redis: Redis;
  prefix: string;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  /**
   * Posts one turn as `tenant`; returns the body the upstream received for it, each marker id
   * turned into its original's unkeyed id: ids are keyed per tenant (docs/security.md), so two
   * tenants' bodies compare only by what their markers name.
   */
  post(tenant: RigTenant, dialect: RigDialect, session: string, body: Json): Promise<string>;
  /** Redis keys of the tenant, with the tenant's name blanked out of them and stash ids unkeyed (comparable across tenants). */
  redisKeys(tenant: RigTenant): Promise<string[]>;
  /** Rows per session-state table for the tenant. */
  durableRows(tenant: RigTenant): Promise<Record<string, number>>;
  /** Waits for every offered shadow job, then writes this replica's figures to shadow_tallies. */
  settleShadow(): Promise<void>;
  stats(tenant: RigTenant): Promise<Record<string, any>>;
  close(): Promise<void>;
}

const TOKEN = 'shadow-rig-admin-token-0123456789';
const MARKER_ID = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;
const STASH_KEY = /^s:(.+)$/g;
const SESSION_TABLES = ['stash_archive', 'ownership', 'session_checkpoint', 'session_state', 'session_turn', 'kept'];
const ROUTE: Record<RigDialect, string> = {
  openai: '/openai/v1/chat/completions',
  anthropic: '/anthropic/v1/messages',
  responses: '/openai/v1/responses',
};

export async function startShadowRig(o: {
  active: PipelineDocument;
  candidate: PipelineDocument;
  sample: number;
  /** Default REDIS_URL (the int tests' Redis). */
  redisUrl?: string;
}): Promise<ShadowRig> {
  const redisUrl = o.redisUrl ?? REDIS_URL;
  const seed = await createControlSeed('shadow');
  const upstream = await startFakeUpstream(jsonScript({ expand: false }));
  const prefix = uniquePrefix();
  const gateway = await startGateway(upstream.url, {
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    DATABASE_URL: seed.dbUrl,
    DURABLE_STORE: 'postgres',
  });
  const app = await createAdminServer({ sql: seed.sql, adminToken: TOKEN });
  await app.listen(0, '127.0.0.1');
  const adminUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(adminUrl + path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  const must = async (method: string, path: string, body?: unknown) => {
    const r = await admin(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json;
  };
  const keys = {} as Record<RigTenant, string>;
  for (const id of RIG_TENANTS) {
    await must('POST', '/v1/tenants', { id, name: id });
    keys[id] = (await must('POST', `/v1/tenants/${id}/keys`, {})).key as string;
  }
  const candidate = (await must('POST', '/v1/tenants/shadowed/configs', { document: o.candidate })).version as number;
  await must('POST', '/v1/tenants/shadowed/configs', {
    document: { ...o.active, shadow: { version: candidate, sample: o.sample } },
    activate: true,
  });
  await must('POST', '/v1/tenants/twin/configs', { document: o.active, activate: true });
  await must('POST', '/v1/tenants/candidate/configs', { document: o.candidate, activate: true });
  const generation = Math.max(
    ...(await Promise.all(RIG_TENANTS.map(async (id) => (await must('GET', `/v1/tenants/${id}`)).generation as number))),
  );
  const sync = gateway.gw.tenancy.sync!;
  while (sync.status().generation < generation) {
    sync.kick();
    await new Promise((r) => setTimeout(r, 20));
  }
  const redis = new Redis(redisUrl);
  let posted = 0;
  /** `text` with every id `pattern` captures replaced by the unkeyed id of the original the tenant stashed under it. */
  const unkeyed = async (tenant: RigTenant, text: string, pattern: RegExp): Promise<string> => {
    const originals = new Map<string, string>();
    for (const [, id] of text.matchAll(pattern)) {
      const original = id === undefined ? null : await gateway.gw.store.getStash(tenant, id);
      if (id !== undefined && original !== null) originals.set(id, stashId(original));
    }
    return text.replace(pattern, (whole: string, id: string) => whole.replace(id, originals.get(id) ?? `unresolved-${id}`));
  };
  return {
    gateway,
    upstream,
    seed,
    redis,
    prefix,
    admin,
    async post(tenant, dialect, session, body) {
      const id = `${tenant}-${++posted}`;
      const res = await fetch(gateway.url + ROUTE[dialect], {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-context-guru-key': keys[tenant],
          'x-context-guru-session': session,
          'x-rig-request': id,
          ...(dialect === 'anthropic' ? { 'x-api-key': 'sk-ant-test' } : { authorization: 'Bearer sk-test' }),
        },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${tenant} ${dialect} turn answered ${res.status}`);
      const got = upstream.requests.filter((r) => r.headers['x-rig-request'] === id);
      if (got.length !== 1) throw new Error(`expected one upstream request for ${id}, got ${got.length}`);
      return unkeyed(tenant, got[0]!.raw, MARKER_ID);
    },
    async redisKeys(tenant) {
      const own = `${prefix}{${tenant}}:`;
      const keys = (await scanKeys(redis, prefix))
        .filter((k) => k.startsWith(own))
        // Session keys name their tenant too (`turn:<tenant>:<session>…`): that part is blanked, and
        // so is a conversation alias (`#` + its name, keyed per tenant: the same conversation differs).
        .map((k) =>
          k
            .slice(own.length)
            .split(tenant)
            .join('<tenant>')
            .replace(/#[0-9a-f]{16}$/, '#<alias>'),
        );
      return (await Promise.all(keys.map((k) => (k.startsWith('s:') ? unkeyed(tenant, k, STASH_KEY) : k)))).sort();
    },
    async durableRows(tenant) {
      await (gateway.gw.store as { flush?: () => Promise<void> }).flush?.();
      const out: Record<string, number> = {};
      for (const t of SESSION_TABLES) {
        out[t] = Number((await seed.sql.query(`SELECT count(*)::int AS n FROM ${t} WHERE tenant = $1`, [tenant]))[0]!.n);
      }
      return out;
    },
    async settleShadow() {
      await gateway.gw.shadow.runner.idle();
      await gateway.gw.shadow.flush!.flush();
    },
    stats: (tenant) => statsDocument(gateway.gw, tenant) as Promise<Record<string, any>>,
    async close() {
      await gateway.close();
      await app.close();
      await upstream.close();
      await flushPrefix(redis, prefix);
      redis.disconnect();
      await seed.close();
    },
  };
}
