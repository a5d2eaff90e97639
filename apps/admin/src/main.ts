// The admin alone (`npm run start:admin`): its own stores (Postgres via DATABASE_URL, else the
// PGlite under DATA_DIR — which no gateway may hold open at the same time), a Redis publisher when
// REDIS_URL is set, and the API on ADMIN_PORT.
import { present } from '@context-guru/components';
import { exitOnBootFailure } from '@context-guru/engine';
import { auditSealing, createStores, RedisGenerationPublisher, sealAuditChain } from '@context-guru/storage';
import { createAdminServer } from './admin.module';
import { parseAdminEnv } from './admin-env';
import { jsonLogger } from './admin-logger';

async function main(): Promise<void> {
  const env = parseAdminEnv();
  const log = jsonLogger(env.logLevel);
  const stores = await createStores({
    redisUrl: env.redisUrl,
    databaseUrl: env.databaseUrl,
    migrationDatabaseUrl: env.migrationDatabaseUrl,
    poolMax: env.pgPoolMax,
    dataDir: env.dataDir,
    redisPrefix: env.redisPrefix,
    hot: env.hotStore,
    durable: env.durableStore,
    migrate: env.migrateOnBoot,
    ttlSeconds: 10_000,
    maxEntries: 10_000,
    purgeEveryMs: 0,
    encryption: env.encryption,
    log,
  });
  // Never 'none' here: DURABLE_STORE only offers postgres and pglite.
  const durable = present(stores.durable, 'the durable store the admin API serves from');
  const publisher = env.redisUrl ? await RedisGenerationPublisher.connect({ url: env.redisUrl, prefix: env.redisPrefix, log }) : undefined;
  const audit = auditSealing(stores.keys, durable.sql, env, sealAuditChain);
  const app = await createAdminServer({
    sql: durable.sql,
    audit,
    store: stores.hot,
    notifier: publisher,
    adminToken: env.adminToken,
    authFailuresPerMinute: env.authFailuresPerMinute,
    bodyLimitBytes: env.bodyLimitBytes,
    schema: () => stores.schema(),
    log,
  });
  await app.listen(env.adminPort, env.host);
  log.info('admin listening', { port: env.adminPort, host: env.host, stores: stores.kinds });
  if (!env.adminToken) log.warn('ADMIN_TOKEN is not set: only admin keys (cg_adm_…) are accepted');
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await app.close().catch(() => undefined);
    await publisher?.close();
    audit.close();
    await stores.close().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch(exitOnBootFailure);
