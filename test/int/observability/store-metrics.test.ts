// The durable-side metrics on real Postgres: cg_postgres_up is 1 while the database answers and 0
// at the next scrape once it does not (a TCP proxy cut), the write-behind counters add only what
// is new at each scrape, and each purge outcome lands in its own series.
import { DurableStore, PgSqlClient, type WriteBehindStats } from '@context-guru/storage';
import { Registry } from 'prom-client';
import { StoreMetrics } from '../../../apps/gateway/src/observability/store-metrics';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy';

let db: FreshDatabase;
let proxy: TcpProxy;
let sql: PgSqlClient;

beforeAll(async () => {
  db = await freshDatabase('store_metrics');
  const u = new URL(db.url);
  proxy = await startTcpProxy(u.hostname, Number(u.port || 5432));
  u.host = `127.0.0.1:${proxy.port}`;
  sql = new PgSqlClient({ connectionString: u.toString(), max: 2, connectTimeoutMs: 500 });
});

afterAll(async () => {
  await sql?.close();
  await proxy?.close();
  await db?.drop();
});

async function value(r: Registry, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const m = (await r.getMetricsAsJSON()).find((x) => x.name === name);
  return m?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

it('reports Postgres reachability at each scrape, queue depth and new drops, purge outcomes', async () => {
  const registry = new Registry();
  const metrics = new StoreMetrics(registry);
  expect(await value(registry, 'cg_postgres_up')).toBeUndefined(); // no durable store watched yet
  const store = new DurableStore(sql);
  let q: WriteBehindStats = {
    pendingStashes: 3,
    pendingStashBytes: 4096,
    pendingCheckpoints: 1,
    pendingKept: 0,
    pendingDerivedBytes: 512,
    flushes: 1,
    failures: 0,
    dropped: { checkpoints: 0, turns: 0 },
    refused: 0,
  };
  metrics.watch({ kind: store.kind, ping: () => store.ping(), queue: () => q });

  expect(await value(registry, 'cg_postgres_up')).toBe(1);
  expect(await value(registry, 'cg_write_behind_pending', { kind: 'stashes' })).toBe(3);
  expect(await value(registry, 'cg_write_behind_pending_bytes', { kind: 'stashes' })).toBe(4096);
  expect(await value(registry, 'cg_write_behind_pending_bytes', { kind: 'derived' })).toBe(512);
  await proxy.cut();
  try {
    expect(await value(registry, 'cg_postgres_up')).toBe(0);
  } finally {
    await proxy.restore();
  }
  expect(await value(registry, 'cg_postgres_up')).toBe(1);

  q = { ...q, dropped: { checkpoints: 0, turns: 40 }, refused: 3, failures: 2 };
  expect(await value(registry, 'cg_write_behind_dropped_total', { kind: 'turns' })).toBe(40);
  q = { ...q, dropped: { checkpoints: 5, turns: 45 } };
  expect(await value(registry, 'cg_write_behind_dropped_total', { kind: 'turns' })).toBe(45);
  expect(await value(registry, 'cg_write_behind_dropped_total', { kind: 'checkpoints' })).toBe(5);
  expect(await value(registry, 'cg_write_behind_refused_total')).toBe(3);
  expect(await value(registry, 'cg_write_behind_flush_failures_total')).toBe(2);

  metrics.purged({ turns: 2, stashes: 5, stashBytes: 0, ownership: 0, checkpoints: 0, sessions: 0, kept: 0, replicas: 1, revokedKeys: 0 });
  metrics.purged(undefined);
  metrics.purged(undefined, true);
  for (const outcome of ['ok', 'skipped', 'failed']) expect(await value(registry, 'cg_retention_purge_total', { outcome })).toBe(1);
  expect(await value(registry, 'cg_retention_purged_rows_total', { table: 'stashes' })).toBe(5);
});
