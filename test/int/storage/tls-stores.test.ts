// TLS to Redis and Postgres with a private CA, against real TLS-only servers started here: a
// throwaway CA and server certificate (openssl), a redis-server listening on a TLS port only, a
// PostgreSQL cluster of its own whose pg_hba accepts `hostssl` only (run as the `postgres` OS user
// when the tests run as root). With the CA named (REDIS_TLS_CA_FILE, sslmode=verify-full plus
// PGSSLROOTCERT) the hot-store contract passes over TLS, the tiered stores write and read an
// original and a turn, and a gateway replays a session without a bust; with another CA, or a host
// name the certificate does not carry, the boot fails at once saying TLS refused the server — no
// wait for an answer that cannot come, no plaintext (the servers have no plaintext way in).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createStores, PgSqlClient, RedisHotStore, type CreateStoresOptions, type RedisEndpoint } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { parseEnv } from '../../../apps/gateway/src/env';
import { bootEntry } from '../../support/env-boot';
import { startFakeUpstream } from '../../support/fake-upstream';
import { startReplica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { expectNoBust, expectResolvable, failOpen, sendTurn, type Sent } from '../../support/session-turns';
import {
  makeCa,
  scratchDir,
  serverCert,
  startTlsPostgres,
  startTlsRedis,
  type Ca,
  type TlsPostgres,
  type TlsRedis,
} from '../../support/tls-servers';
import { deploymentKeys } from '../../support/forwarded-bytes';
import { agentSteps } from '../../support/transcripts';
import { defineHotStoreContract, uniqueTenant, type HotStoreFactory } from '../../unit/storage/hot-store.contract';
import { expireValues, uniquePrefix } from './redis-support';

jest.setTimeout(60_000);

let scratch: ReturnType<typeof scratchDir>;
let ca: Ca;
let otherCa: Ca;
let redis: TlsRedis;
let pg: TlsPostgres;

beforeAll(async () => {
  scratch = scratchDir();
  [ca, otherCa] = await Promise.all([makeCa(scratch.dir, 'cg-test-ca'), makeCa(scratch.dir, 'cg-other-ca')]);
  // Named for 127.0.0.1 only: the server also listens on 127.0.0.2, a name the certificate lacks.
  const server = await serverCert(scratch.dir, ca, 'server', ['127.0.0.1']);
  [redis, pg] = await Promise.all([
    startTlsRedis(scratch.dir, ca, server),
    startTlsPostgres(scratch.dir, server, ['127.0.0.1', '127.0.0.2']),
  ]);
});

afterAll(async () => {
  await redis?.stop();
  await pg?.stop();
  scratch?.remove();
});

/** What the gateway makes of the variables: the Redis endpoint and the Postgres URL, TLS applied. */
function fromEnv(env: Record<string, string>): { redisUrl?: RedisEndpoint; databaseUrl?: string } {
  const parsed = parseEnv(env);
  return { redisUrl: parsed.redisUrl, databaseUrl: parsed.databaseUrl };
}

const trusted = () => ({
  REDIS_URL: redis.url,
  REDIS_TLS_CA_FILE: ca.cert,
  DATABASE_URL: `${pg.url()}?sslmode=verify-full`,
  PGSSLROOTCERT: ca.cert,
});

const base: Omit<CreateStoresOptions, 'redisUrl' | 'databaseUrl'> = {
  dataDir: '/nonexistent',
  ttlSeconds: 600,
  maxEntries: 1000,
  purgeEveryMs: 0,
  bootRetryMs: 100,
  encryption: { key: randomBytes(32).toString('base64') },
};

describe('over TLS with the private CA', () => {
  const open: RedisHotStore[] = [];
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(redis.url, { tls: { ca: readFileSync(ca.cert, 'utf8') } });
  });
  afterAll(async () => {
    for (const s of open) await s.close();
    admin?.disconnect();
  });
  const tlsFactory: HotStoreFactory = async ({ ttlSeconds, maxEntries }) => {
    const url = fromEnv({ REDIS_URL: redis.url, REDIS_TLS_CA_FILE: ca.cert }).redisUrl!;
    const prefix = uniquePrefix();
    const store = await RedisHotStore.connect({ url, prefix, ttlSeconds, maxEntries });
    open.push(store);
    return { store, expireAll: () => expireValues(admin, prefix) };
  };
  defineHotStoreContract('redis over TLS (REDIS_TLS_CA_FILE)', tlsFactory);

  it('the tiered stores write and read an original and a turn, through Redis and Postgres, both verified', async () => {
    const stores = await createStores({ ...base, ...fromEnv(trusted()), redisPrefix: uniquePrefix() });
    const T = uniqueTenant();
    try {
      expect(stores.kinds).toEqual({ hot: 'redis', durable: 'postgres' });
      await stores.hot.putStash(T, 'conv', [{ id: 'orig-1', text: 'the original tool output' }]);
      expect(await stores.hot.getStash(T, 'orig-1')).toBe('the original tool output');
      expect(await stores.hot.advanceTurn(T, 'conv', { n: 3, at: 1000, ttlMs: 300_000 })).toBeNull();
      expect((await stores.hot.advanceTurn(T, 'conv', { n: 5, at: 2000, ttlMs: 300_000 }))?.n).toBe(3);
      await (stores.hot as unknown as { flush(): Promise<void> }).flush();
      // The durable copies landed over the verified connection.
      expect(await stores.durable!.getArchivedStash(T, 'orig-1')).toBe('the original tool output');
      expect((await stores.durable!.loadTurn(T, 'conv'))?.n).toBe(5);
    } finally {
      await stores.close();
    }
    // The session the stores used is encrypted; a plaintext one is turned away by the server.
    const verified = new PgSqlClient({ connectionString: fromEnv(trusted()).databaseUrl!, max: 1 });
    const plain = new PgSqlClient({ connectionString: `${pg.url()}?sslmode=disable`, max: 1 });
    try {
      expect(await verified.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).toEqual([{ ssl: true }]);
      await expect(plain.query('SELECT 1')).rejects.toThrow(/no pg_hba.conf entry .*no encryption/);
    } finally {
      await verified.close();
      await plain.close();
    }
  });

  it('a gateway given the CA replays a session: no bust, markers resolvable', async () => {
    const upstream = await startFakeUpstream(jsonScript({ expand: false }));
    const kek = randomBytes(32).toString('base64');
    const gw = await startReplica({
      ...trusted(),
      REDIS_PREFIX: uniquePrefix(),
      CG_ENCRYPTION_KEY: kek,
      OPENAI_UPSTREAM: upstream.url,
      ANTHROPIC_UPSTREAM: upstream.url,
      CONFIG: 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n',
    });
    const keys = deploymentKeys(fromEnv(trusted()).databaseUrl!, kek);
    try {
      const steps = agentSteps(8, 61);
      const sent: Sent[] = [];
      for (let t = 1; t <= 8; t++) sent.push(await sendTurn(gw.url, upstream, 'tls', steps, t));
      expectNoBust(sent);
      expect(await failOpen(gw.url)).toBe(0);
      await expectResolvable(gw.url, keys.keys, 'tls', sent[sent.length - 1]!.forwarded.raw);
    } finally {
      await keys.close();
      await gw.stop();
      await upstream.close();
    }
  });
});

describe('a server the CA does not verify', () => {
  it('Redis: the boot fails at once, naming the TLS refusal', async () => {
    const url = fromEnv({ REDIS_URL: redis.url, REDIS_TLS_CA_FILE: otherCa.cert }).redisUrl!;
    await expect(RedisHotStore.connect({ url, prefix: uniquePrefix() })).rejects.toThrow(
      /^redis TLS refused: .*\((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\) \(REDIS_TLS_CA_FILE names the CA to trust\)$/,
    );
    // Without a CA the system's are trusted, and they do not know a private one either.
    await expect(RedisHotStore.connect({ url: redis.url, prefix: uniquePrefix() })).rejects.toThrow(/^redis TLS refused: /);
  });

  it('Postgres: the boot fails at once under verify-full, for another CA and for a name the certificate lacks', async () => {
    const otherCaUrl = fromEnv({ DATABASE_URL: `${pg.url()}?sslmode=verify-full&sslrootcert=${otherCa.cert}` }).databaseUrl;
    await expect(createStores({ ...base, hot: 'memory', databaseUrl: otherCaUrl })).rejects.toThrow(
      /^postgres TLS refused: .*\((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/,
    );
    // The right CA, but 127.0.0.2 is not a name of the certificate: verify-full checks the host too.
    const wrongName = fromEnv({ DATABASE_URL: `${pg.url('127.0.0.2')}?sslmode=verify-full`, PGSSLROOTCERT: ca.cert }).databaseUrl;
    await expect(createStores({ ...base, hot: 'memory', databaseUrl: wrongName })).rejects.toThrow(
      /^postgres TLS refused: .*\(ERR_TLS_CERT_ALTNAME_INVALID\)/,
    );
  });

  it('the gateway and the migration runner exit 1 saying so', async () => {
    const env = { ...trusted(), REDIS_TLS_CA_FILE: otherCa.cert, DATA_DIR: join(scratch.dir, 'data') };
    const gw = await bootEntry('apps/gateway/src/main.ts', { ...env, CG_ROLE: 'gateway', PORT: '0' });
    expect(gw.code).toBe(1);
    expect(gw.stderr).toMatch(/redis TLS refused: .*(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/);
    const migrate = await bootEntry('libs/storage/src/sql/migrate-cli.ts', { ...env, PGSSLROOTCERT: otherCa.cert });
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toMatch(
      /"msg":"migration failed","err":"postgres TLS refused: .*(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/,
    );
  });
});
