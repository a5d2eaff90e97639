// Control-plane writes for gateway tests, through the admin's repositories in libs/storage and
// the same contract the admin API keeps: each change bumps the generation in its own transaction,
// then the new number is announced on the Redis control channel (when a publisher is given).
import {
  apiKeysRepository,
  bumpGeneration,
  configsRepository,
  filtersRepository,
  generateKey,
  migrate,
  PgSqlClient,
  RedisGenerationPublisher,
  tenantsRepository,
  type SqlQueryable,
} from '@context-guru/storage';
import type { PipelineDocument as PipelineDocumentLike } from '@context-guru/components';
import { freshDatabase } from './fresh-database';

export interface ControlSeed {
  dbUrl: string;
  sql: PgSqlClient;
  createTenant(id: string, document?: PipelineDocumentLike): Promise<number>;
  issueKey(tenant: string): Promise<{ id: string; key: string }>;
  revokeKey(tenant: string, keyId: string): Promise<number>;
  disableTenant(tenant: string, disabled?: boolean): Promise<number>;
  /** A new config version, activated; returns the generation. */
  pushConfig(tenant: string, document: PipelineDocumentLike): Promise<{ version: number; generation: number }>;
  activateConfig(tenant: string, version: number): Promise<number>;
  pushFilter(tenant: string, name: string, yaml: string): Promise<number>;
  close(): Promise<void>;
}

/** A fresh database (dropped on close), migrated, with writes that bump and announce. */
export async function createControlSeed(name: string, redisUrl?: string): Promise<ControlSeed> {
  const db = await freshDatabase(name);
  const dbUrl = db.url;
  const sql = new PgSqlClient({ connectionString: dbUrl, max: 3 });
  await migrate(sql);
  const publisher = redisUrl ? await RedisGenerationPublisher.connect({ url: redisUrl }) : undefined;
  const change = async (tenant: string, fn: (c: SqlQueryable) => Promise<unknown>): Promise<number> => {
    const g = await sql.transaction(async (c) => {
      await fn(c);
      return bumpGeneration(c, tenant);
    });
    await publisher?.notify(g);
    return g;
  };
  return {
    dbUrl,
    sql,
    async createTenant(id, document) {
      return change(id, async (c) => {
        await tenantsRepository.insert(c, { id, name: `tenant ${id}` });
        if (document) {
          const v = await configsRepository.insert(c, id, document, 'test');
          await configsRepository.activate(c, id, v.version);
        }
      });
    },
    async issueKey(tenant) {
      const k = generateKey('tenant');
      let id = '';
      await change(tenant, async (c) => {
        id = (await apiKeysRepository.insert(c, { hash: k.hash, prefix: k.prefix, role: 'tenant', tenant, label: null, createdBy: 'test' }))
          .id;
      });
      return { id, key: k.key };
    },
    revokeKey: (tenant, keyId) => change(tenant, (c) => apiKeysRepository.revoke(c, keyId)),
    disableTenant: (tenant, disabled = true) => change(tenant, (c) => tenantsRepository.update(c, tenant, { disabled })),
    async pushConfig(tenant, document) {
      let version = 0;
      const generation = await change(tenant, async (c) => {
        await tenantsRepository.lock(c, tenant);
        version = (await configsRepository.insert(c, tenant, document, 'test')).version;
        await configsRepository.activate(c, tenant, version);
      });
      return { version, generation };
    },
    activateConfig: (tenant, version) => change(tenant, (c) => configsRepository.activate(c, tenant, version)),
    pushFilter: (tenant, name, yaml) =>
      change(tenant, async (c) => {
        const v = await filtersRepository.insert(c, tenant, name, yaml, 'test');
        await filtersRepository.activate(c, tenant, name, v.version);
      }),
    async close() {
      await publisher?.close();
      await sql.close();
      await db.drop();
    },
  };
}
