// RedisHotStore while its Redis goes away and comes back: every method rejects (the gateway then
// fails open) instead of hanging, and the store recovers with no restart. Uses a private
// redis-server on a free port so the shared one is never disturbed.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { RedisHotStore } from '@context-guru/storage';

jest.setTimeout(30_000);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function startRedis(port: number): ChildProcess {
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
}

function stop(p: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (p.exitCode !== null) return resolve();
    p.once('exit', () => resolve());
    p.kill('SIGTERM');
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until fn resolves (no assertion on how long it took). */
async function eventually(fn: () => Promise<unknown>, attempts = 100): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await fn();
      return;
    } catch (err) {
      if (i >= attempts) throw err;
      await sleep(100);
    }
  }
}

describe('RedisHotStore failure behaviour', () => {
  let port: number;
  let server: ChildProcess | undefined;
  let store: RedisHotStore | undefined;

  beforeAll(async () => {
    port = await freePort();
  });
  afterAll(async () => {
    await store?.close();
    if (server) await stop(server);
  });

  it('refuses to boot when Redis never answers', async () => {
    await expect(RedisHotStore.connect({ url: `redis://127.0.0.1:${port}`, readyTimeoutMs: 300, connectTimeoutMs: 200 })).rejects.toThrow(
      /not ready/,
    );
  });

  it('rejects every call while Redis is down, then recovers by itself', async () => {
    server = startRedis(port);
    store = await RedisHotStore.connect({ url: `redis://127.0.0.1:${port}`, readyTimeoutMs: 10_000, connectTimeoutMs: 200 });
    const s = store;
    await s.putStash('t', 'sess', [{ id: '0000000000000001', text: 'before' }]);

    await stop(server);
    server = undefined;
    await expect(s.ping()).rejects.toThrow();
    const calls: Array<() => Promise<unknown>> = [
      () => s.putStash('t', 'sess', [{ id: '0000000000000002', text: 'x' }]),
      () => s.getStash('t', '0000000000000001'),
      () => s.owns('t', 'sess', '0000000000000001'),
      () => s.loadSession('t', 'sess', ['a'.repeat(24)]),
      () => s.commitSession('t', 'sess', { frozen: new Map([['mask:' + 'a'.repeat(24), 'r']]), offloaded: true }),
      () => s.markKept('t', ['a'.repeat(24)]),
      () => s.advanceTurn('t', 'sess', { n: 1, at: 1, ttlMs: 1 }),
    ];
    for (const call of calls) await expect(call()).rejects.toThrow();

    server = startRedis(port);
    await eventually(() => s.ping());
    await s.putStash('t', 'sess', [{ id: '0000000000000003', text: 'after' }]);
    expect(await s.getStash('t', '0000000000000003')).toBe('after');
    // The restarted server is empty: the old entry is simply a miss, never an error.
    expect(await s.getStash('t', '0000000000000001')).toBeNull();
  });
});
