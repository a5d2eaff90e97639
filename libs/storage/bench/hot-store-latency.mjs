// Quick latency probe (not a test): p50/p99 of putStash(5 × 4 KB) + loadSession, and round trips
// per putStash + commitSession, for memory, Redis and Redis+Postgres (tiered).
// Run after `npx tsc -b libs/storage`:  node libs/storage/bench/hot-store-latency.mjs
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
const require = createRequire(import.meta.url);
const s = require('../dist/index.js');

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const N = Number(process.env.N || 2000);
const ck = (i) => i.toString(16).padStart(24, '0');

function pct(xs, p) {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))];
}

async function run(name, store, counter) {
  const tenant = `bench-${Date.now()}`;
  const contentKeys = Array.from({ length: 40 }, (_, i) => ck(i));
  await store.commitSession(tenant, 'sess', {
    frozen: new Map(contentKeys.slice(0, 10).map((k) => [`mask:${k}`, 'r'.repeat(200)])),
    offloaded: true,
  });
  const times = [];
  for (let i = 0; i < N; i++) {
    const entries = Array.from({ length: 5 }, () => {
      const text = randomBytes(2048).toString('hex'); // 4 KB
      return { id: text.slice(0, 16), text };
    });
    const t0 = process.hrtime.bigint();
    await store.putStash(tenant, 'sess', entries);
    await store.loadSession(tenant, 'sess', contentKeys);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  let trips = 'n/a';
  if (counter) {
    const before = counter();
    await store.putStash(tenant, 'sess', [{ id: 'ffffffffffffffff', text: 'x' }]);
    await store.commitSession(tenant, 'sess', { frozen: new Map([[`mask:${ck(99)}`, 'y']]), offloaded: true });
    trips = counter() - before;
  }
  const warm = times.slice(Math.floor(N / 10));
  console.log(
    `${name.padEnd(16)} p50 ${pct(warm, 50).toFixed(3)} ms  p99 ${pct(warm, 99).toFixed(3)} ms  round trips putStash+commitSession: ${trips}`,
  );
}

const mem = new s.MemoryHotStore();
await run('memory', mem);
await mem.close();

const prefix = `cgbench:${process.pid}:`;
const redis = await s.RedisHotStore.connect({ url: REDIS_URL, prefix });
await run('redis', redis, () => redis.roundTrips);

const schema = `cg_bench_${process.pid}`;
const adminSql = new s.PgSqlClient({ connectionString: DATABASE_URL, max: 1 });
await adminSql.exec(`CREATE SCHEMA ${schema}`);
const sql = new s.PgSqlClient({ connectionString: DATABASE_URL, schema });
await s.migrate(sql);
const tiered = new s.TieredHotStore(redis, new s.DurableStore(sql));
await run('redis+postgres', tiered, () => redis.roundTrips);
await tiered.flush();
console.log('write-behind', tiered.queueStats());
await tiered.close();
await sql.close();
await adminSql.exec(`DROP SCHEMA ${schema} CASCADE`);
await adminSql.close();

// Clean up the bench keys.
const { Redis } = require('ioredis');
const r = new Redis(REDIS_URL);
let cursor = '0';
do {
  const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
  cursor = next;
  if (keys.length) await r.del(...keys);
} while (cursor !== '0');
await r.quit();
