// Originals at rest (issue 29): what a database dump, the embedded database's files (heap and WAL)
// and a Redis SCAN/GET show of a tenant's originals and frozen decisions. Each of them must hold
// no plaintext canary, and the same stores, with the same key, must still give every value back.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createStores } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { uniqueTenant, writes } from '../../unit/storage/hot-store.contract';
import { REDIS_URL, flushPrefix, scanKeys, uniquePrefix } from '../storage/redis-support';

jest.setTimeout(60_000);

const ck = 'c'.repeat(24);
const slot = `mask:${ck}`;
const ID = '0123456789abcdef';
/** Small on purpose: a value this size is stored inline and uncompressed, so plaintext would show. */
const canary = (): string => `CUSTOMER_SSN=${randomBytes(6).toString('hex')}`;
const base = { ttlSeconds: 1000, maxEntries: 100 };

/** Every value under a Redis prefix, whatever its type. */
async function redisValues(admin: Redis, prefix: string): Promise<string> {
  const out: string[] = [];
  for (const key of await scanKeys(admin, prefix)) {
    const type = await admin.type(key);
    if (type === 'string') out.push((await admin.get(key)) ?? '');
    if (type === 'hash') out.push(JSON.stringify(await admin.hgetall(key)));
    if (type === 'set') out.push((await admin.smembers(key)).join(' '));
    if (type === 'zset') out.push((await admin.zrange(key, '0', '-1')).join(' '));
    out.push(key);
  }
  return out.join('\n');
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('originals at rest', () => {
  let db: FreshDatabase;
  let admin: Redis;
  beforeAll(async () => {
    db = await freshDatabase('at_rest');
    admin = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    admin.disconnect();
    await db.drop();
  });

  it('redis + postgres: a Redis scan and a pg_dump show no canary; the stores still answer every value', async () => {
    const prefix = uniquePrefix();
    const key = randomBytes(32).toString('base64');
    const T = uniqueTenant();
    const [original, decision] = [canary(), canary()];
    const opts = { ...base, dataDir: '/nonexistent', redisUrl: REDIS_URL, databaseUrl: db.url, redisPrefix: prefix, encryption: { key } };
    const first = await createStores(opts);
    try {
      await first.hot.putStash(T, 'sess', [{ id: ID, text: `${original}\nmore output` }]);
      await first.hot.commitSession(T, 'sess', writes({ [slot]: `head ${decision} <<cg:${ID}>>` }, true));
    } finally {
      await first.close(); // flushes the archive and checkpoints
    }
    const scanned = await redisValues(admin, prefix);
    expect(scanned).toContain(`s:${ID}`); // the scan did read the stash key
    expect(scanned).not.toContain(original);
    expect(scanned).not.toContain(decision);
    const dump = execFileSync('pg_dump', ['--data-only', db.url], { encoding: 'utf8' });
    expect(dump).toContain('stash_archive'); // the dump did hold the archive
    expect(dump).not.toContain(original);
    expect(dump).not.toContain(decision);

    const again = await createStores(opts);
    try {
      expect(await again.hot.getStash(T, ID)).toBe(`${original}\nmore output`);
      await flushPrefix(admin, prefix); // Redis lost: the archive and the checkpoint answer
      expect(await again.hot.getStash(T, ID)).toBe(`${original}\nmore output`);
      expect((await again.hot.loadSession(T, 'sess', [ck])).frozen.get(slot)).toBe(`head ${decision} <<cg:${ID}>>`);
    } finally {
      await again.close();
      await flushPrefix(admin, prefix);
    }
  });

  it('redis without a database: the data keys live in Redis, wrapped; a scan shows no canary', async () => {
    const prefix = uniquePrefix();
    const T = uniqueTenant();
    const original = canary();
    const opts = { ...base, dataDir: '/nonexistent', redisUrl: REDIS_URL, durable: 'none', redisPrefix: prefix };
    const stores = await createStores({ ...opts, encryption: { key: randomBytes(32).toString('base64') } });
    try {
      await stores.hot.putStash(T, 'sess', [{ id: ID, text: original }]);
      const scanned = await redisValues(admin, prefix);
      expect(scanned).toContain(`${prefix}datakeys:`);
      expect(scanned).not.toContain(original);
      expect(await stores.hot.getStash(T, ID)).toBe(original);
    } finally {
      await stores.close();
      await flushPrefix(admin, prefix);
    }
  });

  it('embedded: the PGlite data directory (heap and WAL) holds no canary; the key file is created 0600 and reopens it', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cg-at-rest-'));
    const T = uniqueTenant();
    const [original, decision] = [canary(), canary()];
    try {
      const first = await createStores({ ...base, dataDir });
      try {
        await first.hot.putStash(T, 'sess', [{ id: ID, text: original }]);
        await first.hot.commitSession(T, 'sess', writes({ [slot]: `head ${decision}` }, true));
      } finally {
        await first.close();
      }
      const files = filesUnder(dataDir);
      expect(files.some((f) => f.includes(`${path.sep}pg_wal${path.sep}`))).toBe(true);
      for (const f of files) {
        const bytes = readFileSync(f);
        expect({ f, original: bytes.includes(original), decision: bytes.includes(decision) }).toEqual({
          f,
          original: false,
          decision: false,
        });
      }
      expect(statSync(path.join(dataDir, 'encryption.key')).mode & 0o777).toBe(0o600);

      const second = await createStores({ ...base, dataDir });
      try {
        expect(await second.hot.getStash(T, ID)).toBe(original);
        expect((await second.hot.loadSession(T, 'sess', [ck])).frozen.get(slot)).toBe(`head ${decision}`);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
