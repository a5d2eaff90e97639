// The propagation contract between the admin API and every gateway replica (docs/control-plane.md, migration
// 0004): a write bumps the one monotonic generation and stamps the tenant it touched IN the
// transaction of the change; after COMMIT the new number is announced (Redis pub/sub between
// processes, an in-process bus in the embedded single process). The announcement only wakes
// replicas early: they read the truth from Postgres, and a poll covers a lost message.
import { EventEmitter } from 'node:events';
import { errorText, silentLogger, type StorageLogger } from '../storage-logger';
import { col, firstRow, type SqlQueryable } from '../sql/sql-client';
import { openRedis, type RedisClient, type RedisEndpoint } from '../redis/redis-connection';

/** The Redis channel a new generation is published on: `<REDIS_PREFIX or "cg:">control`. */
export function controlChannel(prefix?: string): string {
  return `${prefix || 'cg:'}control`;
}

/** Bumps the generation and stamps `tenant` with it; call inside the change's transaction. */
export async function bumpGeneration(c: SqlQueryable, tenant: string): Promise<number> {
  const rows = await c.query(
    'UPDATE control_generation SET generation = generation + 1, changed_at = now() WHERE id = 1 RETURNING generation',
  );
  const generation = col.num(firstRow(rows, 'control_generation bump'), 'generation');
  await c.query('UPDATE tenants SET generation = $2 WHERE id = $1', [tenant, generation]);
  return generation;
}

/** The current generation (0 before any change). */
export async function readGeneration(c: SqlQueryable): Promise<number> {
  const rows = await c.query('SELECT generation FROM control_generation WHERE id = 1');
  return rows[0] ? col.num(rows[0], 'generation') : 0;
}

/** Announces a committed generation. Never throws: a lost announcement is covered by the poll. */
export interface GenerationNotifier {
  notify(generation: number): Promise<void>;
}

/** Where a replica hears announcements; returns the unsubscribe function. */
export interface GenerationSource {
  subscribe(listener: (generation: number) => void): () => void;
}

/**
 * The embedded single process: the composition entry creates one bus and hands it to the admin
 * (as its notifier) and to the gateway (as its source), so neither app imports the other.
 */
export class InProcessGenerationBus implements GenerationNotifier, GenerationSource {
  private readonly events = new EventEmitter();

  async notify(generation: number): Promise<void> {
    this.events.emit('generation', generation);
  }

  subscribe(listener: (generation: number) => void): () => void {
    this.events.on('generation', listener);
    return () => this.events.off('generation', listener);
  }
}

/** Publishes the decimal generation on the control channel. */
export class RedisGenerationPublisher implements GenerationNotifier {
  private constructor(
    private readonly redis: RedisClient,
    private readonly channel: string,
    private readonly log: StorageLogger,
  ) {}

  /**
   * Never fails the caller's boot: a Redis that is down now is retried in the background, and a
   * generation announced meanwhile is only logged (replicas poll the database anyway).
   */
  static async connect(o: { url: RedisEndpoint; prefix?: string; log?: StorageLogger }): Promise<RedisGenerationPublisher> {
    const redis = openRedis(o.url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    const log = o.log ?? silentLogger;
    redis.on('error', (err) => log.warn('control publisher redis error', { err: errorText(err) }));
    await redis.connect().catch((err: unknown) => log.warn('control publisher not connected yet (retrying)', { err: errorText(err) }));
    return new RedisGenerationPublisher(redis, controlChannel(o.prefix), log);
  }

  async notify(generation: number): Promise<void> {
    try {
      await this.redis.publish(this.channel, String(generation));
    } catch (err) {
      this.log.warn('control generation not announced (replicas will poll)', { generation, err: errorText(err) });
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** Several notifiers at once (e.g. Redis and the in-process bus). */
export function fanOut(...targets: readonly GenerationNotifier[]): GenerationNotifier {
  return { notify: async (g) => void (await Promise.all(targets.map((t) => t.notify(g)))) };
}
