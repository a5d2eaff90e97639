// Wrapped data keys in Redis, for a deployment without a database: one hash per scope, a field per
// version (`keyId:base64`), written HSETNX so the first replica to create a version wins.
import type { DataKeyStore, WrappedDataKey } from '../crypto/data-keys';
import { scanKeys, type RedisClient } from './redis-connection';

export class RedisDataKeyStore implements DataKeyStore {
  constructor(
    private readonly redis: RedisClient,
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
    await scanKeys(
      this.redis,
      `${this.prefix}datakeys:*`,
      async (keys) => void out.push(...keys.map((k) => decodeURIComponent(k.slice(`${this.prefix}datakeys:`.length)))),
      this.answered,
    );
    return out;
  }

  private key(scope: string): string {
    return `${this.prefix}datakeys:${encodeURIComponent(scope)}`;
  }
}

const encode = (k: WrappedDataKey): string => `${k.keyId}:${k.wrapped.toString('base64')}`;
