// Wrapped data keys in Redis, for a deployment without a database: one hash per scope, a field per
// version (`keyId:base64`), written HSETNX so the first replica to create a version wins.
import type { Redis } from 'ioredis';
import type { DataKeyStore, WrappedDataKey } from '../crypto/data-keys';

export class RedisDataKeyStore implements DataKeyStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly answered: <T>(p: Promise<T>) => Promise<T>,
  ) {}

  async list(scope: string): Promise<WrappedDataKey[]> {
    const all = await this.answered(this.redis.hgetall(this.key(scope)));
    return Object.entries(all)
      .map(([version, v]) => {
        const [keyId = '', b64 = ''] = v.split(':');
        return { version: Number(version), keyId, wrapped: Buffer.from(b64, 'base64') };
      })
      .sort((a, b) => a.version - b.version);
  }

  async add(scope: string, k: WrappedDataKey): Promise<void> {
    await this.answered(this.redis.hsetnx(this.key(scope), String(k.version), encode(k)));
  }

  async rewrap(scope: string, k: WrappedDataKey): Promise<void> {
    await this.answered(this.redis.hset(this.key(scope), String(k.version), encode(k)));
  }

  async scopes(): Promise<string[]> {
    const out: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await this.answered(this.redis.scan(cursor, 'MATCH', `${this.prefix}datakeys:*`, 'COUNT', 500));
      out.push(...keys.map((k) => decodeURIComponent(k.slice(`${this.prefix}datakeys:`.length))));
      cursor = next;
    } while (cursor !== '0');
    return out;
  }

  private key(scope: string): string {
    return `${this.prefix}datakeys:${encodeURIComponent(scope)}`;
  }
}

const encode = (k: WrappedDataKey): string => `${k.keyId}:${k.wrapped.toString('base64')}`;
