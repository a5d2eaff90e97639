// Hears generation announcements on the Redis control channel (a dedicated subscriber
// connection; ioredis resubscribes after a reconnect). A message is only a hint to read Postgres
// now; anything that is not a decimal generation is ignored.
import { controlChannel, openRedis, type GenerationSource, type RedisClient, type RedisEndpoint } from '@context-guru/storage';
import { errorText, type Logger } from '@context-guru/engine';

export class RedisGenerationSource implements GenerationSource {
  private readonly listeners = new Set<(generation: number) => void>();
  private readonly redis: RedisClient;
  private readonly channel: string;

  constructor(o: { url: RedisEndpoint; prefix?: string; log: Logger }) {
    this.channel = controlChannel(o.prefix);
    // No offline queue limit matters here: a subscriber sends nothing but SUBSCRIBE.
    this.redis = openRedis(o.url, { lazyConnect: true, maxRetriesPerRequest: null });
    let warned = false;
    this.redis.on('error', (err) => {
      if (!warned) o.log.warn('control subscriber redis error (the poll covers it)', { error: errorText(err) });
      warned = true;
    });
    this.redis.on('ready', () => (warned = false));
    this.redis.on('message', (channel: string, message: string) => {
      if (channel !== this.channel || !/^\d{1,15}$/.test(message)) return;
      const g = Number(message);
      for (const l of this.listeners) l(g);
    });
  }

  /** Connects and subscribes; a failure is logged, not thrown (the poll still runs). */
  async start(): Promise<void> {
    try {
      await this.redis.connect();
      await this.redis.subscribe(this.channel);
    } catch {
      // reported by the error handler; ioredis keeps retrying in the background
    }
  }

  subscribe(listener: (generation: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
