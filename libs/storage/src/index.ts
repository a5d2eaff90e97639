// Public surface of @context-guru/storage: hot-store adapters, the durable store, the factory.
export * from './storage-logger';
export * from './memory/memory-hot.store';
export * from './memory/ttl-lru.cache';
export * from './redis/redis-hot.store';
export * from './sql/sql-client';
export * from './sql/pg-sql.client';
export * from './sql/pglite-sql.client';
export * from './sql/migrate';
export * from './sql/durable.store';
export * from './write-behind.queue';
export * from './tiered.store';
export * from './create-stores';
export * from './memory/ephemeral-hot.store';
