// Helpers for tests and benches that run gateway replicas against a control plane: start the
// whole rig (private Redis, seeded control plane, fake provider, replicas) and tear it down, wait
// until a replica has applied a generation, and post a turn with a tenant key.
import type { Dialect } from '@context-guru/components';
import { createControlSeed, type ControlSeed } from './control-seed';
import { startFakeUpstream, type FakeUpstream, type Script } from './fake-upstream';
import { startPrivateRedis, startReplica, type Replica } from './replicas';

export interface TenantReplicas {
  redis: { url: string; stop(): Promise<void> };
  seed: ControlSeed;
  upstream: FakeUpstream;
  replicas: Replica[];
  /** Stops what was started, last first: the replicas, the provider, the control plane, Redis. */
  close(): Promise<void>;
}

export interface TenantReplicasOptions {
  /** Names the control plane's database. */
  name: string;
  /** How the fake provider answers. */
  script: Script;
  replicas: number;
  /** Tenants, keys and versions to create before any replica boots (so each boots with them). */
  seedWith(seed: ControlSeed): Promise<void>;
  /** More replica environment; Redis, the database and both upstreams are set. */
  env?: Record<string, string>;
}

/** Replicas on one private Redis and one seeded control plane; whatever started is stopped if a later step fails. */
export async function startTenantReplicas(o: TenantReplicasOptions): Promise<TenantReplicas> {
  const stops: Array<() => Promise<unknown>> = [];
  const close = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    const redis = await startPrivateRedis();
    stops.push(() => redis.stop());
    const seed = await createControlSeed(o.name, redis.url);
    stops.push(() => seed.close());
    const upstream = await startFakeUpstream(o.script);
    stops.push(() => upstream.close());
    await o.seedWith(seed);
    const env = {
      REDIS_URL: redis.url,
      DATABASE_URL: seed.dbUrl,
      OPENAI_UPSTREAM: upstream.url,
      ANTHROPIC_UPSTREAM: upstream.url,
      ...o.env,
    };
    const booted = await Promise.allSettled(Array.from({ length: o.replicas }, () => startReplica(env)));
    const replicas = booted.flatMap((b) => (b.status === 'fulfilled' ? [b.value] : []));
    stops.push(() => Promise.all(replicas.map((r) => r.stop())));
    const failed = booted.find((b) => b.status === 'rejected');
    if (failed) throw failed.reason;
    return { redis, seed, upstream, replicas, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export interface ReadyBody {
  ready: boolean;
  control?: { loaded: boolean; generation: number; latest: number; stale: boolean; error?: string; replica?: string };
  config: Array<{ tenant: string; version: number; pipeline: string[] }>;
}

export async function readyz(r: Replica): Promise<{ status: number; body: ReadyBody }> {
  const res = await fetch(`${r.url}/readyz`);
  return { status: res.status, body: (await res.json()) as ReadyBody };
}

/** Polls /readyz until the replica reports `generation` applied; returns when it saw it (ms epoch). */
export async function waitGeneration(r: Replica, generation: number, timeoutMs = 15_000, everyMs = 5): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await readyz(r).catch(() => ({ body: undefined as ReadyBody | undefined }));
    if ((body?.control?.generation ?? -1) >= generation) return Date.now();
    if (Date.now() > deadline) throw new Error(`replica ${r.url} did not apply generation ${generation} (at ${body?.control?.generation})`);
    await new Promise((res) => setTimeout(res, everyMs));
  }
}

export function postTurn(
  r: Replica,
  dialect: Dialect,
  body: unknown,
  headers: Record<string, string> = {},
  prefix = '',
): Promise<Response> {
  const path = dialect === 'openai' ? '/openai/v1/chat/completions' : '/anthropic/v1/messages';
  const cred: Record<string, string> = dialect === 'openai' ? { authorization: 'Bearer sk-test' } : { 'x-api-key': 'sk-ant-test' };
  return fetch(`${r.url}${prefix}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...cred, ...headers },
    body: JSON.stringify(body),
  });
}
