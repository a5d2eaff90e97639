// The cost of shared state: the gateway's added time per request with the in-memory store against
// Redis (hot) + Postgres (durable, written behind), at 1 and 32 concurrent sessions, and the
// Redis round trips one request makes. Needs REDIS_URL / DATABASE_URL (defaults: loopback).
import { type HotStore } from '@context-guru/components';
import { createStores, DurableStore, MemoryHotStore, PgSqlClient, RedisHotStore, TieredHotStore } from '@context-guru/storage';
import { prepareRequest, createTenantRuntime } from '@context-guru/engine';
import { prepareDeps } from '../test/support/prepare-deps';
import { agentSteps, anthropicTurn } from '../test/support/transcripts';
import { percentile, table } from './bench-util';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TURNS = 30;

/** `afterTurn` is called after each turn of the sequential run (turn index). */
async function drive(store: HotStore, sessions: number, afterTurn?: (t: number) => void): Promise<number[]> {
  const tenant = createTenantRuntime(`bench-${Date.now()}`, { preset: 'agent' }, 1);
  const deps = prepareDeps(store);
  const steps = agentSteps(TURNS, 9);
  const bodies = Array.from({ length: TURNS }, (_, t) => JSON.stringify(anthropicTurn(steps, t + 1)));
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      for (let t = 0; t < TURNS; t++) {
        const t0 = performance.now();
        const p = await prepareRequest(deps, {
          route: 'anthropic',
          dialect: 'anthropic',
          raw: bodies[t]!,
          tenant,
          pipeline: tenant.built.pipeline,
          cacheMode: 'auto',
          sessionHeader: `s${s}`,
          bypassHeader: false,
        });
        if (p.report.failOpen) throw new Error(`failed open: ${p.report.failOpen}`);
        if (t >= 5) times.push(performance.now() - t0);
        if (sessions === 1) afterTurn?.(t);
      }
    }),
  );
  return times;
}

export async function runSharedState(): Promise<string> {
  const rows: string[][] = [];
  for (const sessions of [1, 32]) {
    const memory = await drive(new MemoryHotStore({ ttlSeconds: 10_000, maxEntries: 100_000 }), sessions);
    rows.push([`memory`, String(sessions), percentile(memory, 50).toFixed(2), percentile(memory, 90).toFixed(2), '0']);
    const stores = await createStores({
      redisUrl: REDIS_URL,
      databaseUrl: DATABASE_URL,
      dataDir: '',
      // A fixed key: no key file is generated in the working directory.
      encryption: { key: Buffer.alloc(32, 7).toString('base64') },
      ttlSeconds: 10_000,
      maxEntries: 100_000,
      redisPrefix: `cgbench${Date.now()}:`,
    });
    try {
      const redis = (stores.hot as TieredHotStore).hot as RedisHotStore;
      // Round trips of each warm turn of the sequential run only: commands of concurrent sessions
      // issued in the same burst would be counted together, which flatters the figure.
      const trips: number[] = [];
      let last = redis.roundTrips;
      const shared = await drive(stores.hot, sessions, (t) => {
        if (t >= 5) trips.push(redis.roundTrips - last);
        last = redis.roundTrips;
      });
      const mean = trips.reduce((a, b) => a + b, 0) / Math.max(1, trips.length);
      const perRequest = sessions === 1 ? `${mean.toFixed(1)} (max ${Math.max(...trips)})` : '(see 1 session)';
      rows.push([`redis + postgres`, String(sessions), percentile(shared, 50).toFixed(2), percentile(shared, 90).toFixed(2), perRequest]);
    } finally {
      await stores.close();
    }
    // The same stores built by hand without the key ring: what sealing at rest costs a turn.
    const plainRedis = await RedisHotStore.connect({
      url: REDIS_URL,
      prefix: `cgbench${Date.now()}p:`,
      ttlSeconds: 10_000,
      maxEntries: 100_000,
    });
    const plainSql = new PgSqlClient({ connectionString: DATABASE_URL });
    const plain = new TieredHotStore(plainRedis, new DurableStore(plainSql));
    try {
      const unsealed = await drive(plain, sessions);
      rows.push([
        `redis + postgres, unsealed`,
        String(sessions),
        percentile(unsealed, 50).toFixed(2),
        percentile(unsealed, 90).toFixed(2),
        '',
      ]);
    } finally {
      await plain.close();
      await plainSql.close();
    }
  }
  return `Anthropic agent session, ${TURNS} turns per session, preset agent; warm turns only\n\n${table(['store', 'concurrent sessions', 'added p50 ms', 'added p90 ms', 'redis round trips / warm turn (mean, max)'], rows)}`;
}
