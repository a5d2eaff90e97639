// A failover behind one address (a managed Redis whose DNS name moves to the promoted replica):
// the hot store's open connection still reaches the old primary, now a replica answering every
// write with READONLY. That write rejects as store_unavailable (the gateway fails open, not 500),
// the client reconnects on it, and the next write lands on the new primary. Real servers: two
// private redis-servers and a TCP proxy standing in for the moving address.
import { RedisHotStore, StorageError } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../support/replicas';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy';
import { uniqueTenant } from '../../unit/storage/hot-store.contract';
import { uniquePrefix } from './redis-support';

let oldPrimary: PrivateRedis;
let newPrimary: PrivateRedis;
let proxy: TcpProxy;
let store: RedisHotStore;

beforeAll(async () => {
  [oldPrimary, newPrimary] = [await startPrivateRedis(), await startPrivateRedis()];
  proxy = await startTcpProxy('127.0.0.1', oldPrimary.port);
  store = await RedisHotStore.connect({ url: `redis://127.0.0.1:${proxy.port}`, prefix: uniquePrefix() });
});

afterAll(async () => {
  await store?.close();
  await proxy?.close();
  await oldPrimary?.stop();
  await newPrimary?.stop();
});

const entry = (text: string) => [{ id: '00000000000000a1', text }];

it('after a promotion behind the same address: READONLY is unavailable once, then writes reach the new primary', async () => {
  const T = uniqueTenant();
  await store.putStash(T, 'sess', entry('before'));
  expect(await store.getStash(T, '00000000000000a1')).toBe('before');

  // The failover: the old primary becomes a replica of the new one, the address moves.
  const admin = new Redis(oldPrimary.url);
  await admin.replicaof('127.0.0.1', String(newPrimary.port));
  admin.disconnect();
  proxy.retarget(newPrimary.port);

  const first = await store.putStash(T, 'sess', entry('during')).then(
    () => 'written',
    (err: unknown) => (err instanceof StorageError ? err.code : String(err)),
  );
  // The open connection still reaches the old primary (a role change keeps its clients connected).
  expect(first).toBe('store_unavailable');

  let written = false;
  for (let i = 0; i < 50 && !written; i++) {
    written = await store.putStash(T, 'sess', entry('after')).then(
      () => true,
      () => false,
    );
    if (!written) await new Promise((r) => setTimeout(r, 100));
  }
  expect(written).toBe(true);
  const direct = new Redis(newPrimary.url);
  try {
    expect(await direct.get(`${store.tenantPrefix(T)}s:00000000000000a1`)).toBe('after');
  } finally {
    direct.disconnect();
  }
});
