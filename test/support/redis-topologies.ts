// Real Redis topologies for the tests: a Redis Cluster (primaries and replicas from
// `redis-server --cluster-enabled yes`, joined by `redis-cli --cluster create`) and a Sentinel
// setup (a primary, a replica, three `redis-server --sentinel`). Every server is a child process
// of the test on a port of its own range (cluster 17000+, its bus port 27000+; Sentinel's data
// nodes 17020+, sentinels 26380+), in a scratch directory removed on stop().
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';

const run = promisify(execFile);

interface RedisServer {
  port: number;
  proc: ChildProcess;
  /** SIGKILL: a crash, not a shutdown. */
  kill(): Promise<void>;
}

export interface RedisClusterSetup {
  /** host:port of every node, as REDIS_CLUSTER_NODES takes them. */
  nodes: string;
  servers: RedisServer[];
  /** One client per primary, for looking at what landed where. */
  primaries(): Promise<Redis[]>;
  stop(): Promise<void>;
}

export interface SentinelSetup {
  /** host:port of every sentinel, as REDIS_SENTINELS takes them. */
  sentinels: string;
  master: string;
  primary: RedisServer;
  replica: RedisServer;
  /** The port the Sentinels name as the primary now. */
  primaryPort(): Promise<number>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Fails at once, naming the port, when something else holds one of ours (never a silent share). */
async function claim(ports: number[]): Promise<void> {
  for (const p of ports) if (!(await portFree(p))) throw new Error(`port ${p} is in use: the Redis topology tests need it free`);
}

async function until(what: () => Promise<boolean>, label: string, attempts = 300): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await what().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${label}: never happened`);
}

async function ping(port: number): Promise<boolean> {
  const c = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await c.connect();
    return (await c.ping()) === 'PONG';
  } finally {
    c.disconnect();
  }
}

/** fn with a client of the server on `port`, disconnected after. */
async function withClient<T>(port: number, fn: (c: Redis) => Promise<T>): Promise<T> {
  const c = new Redis(port, '127.0.0.1');
  try {
    return await fn(c);
  } finally {
    c.disconnect();
  }
}

async function startServer(port: number, args: string[]): Promise<RedisServer> {
  const proc = spawn('redis-server', args, { stdio: 'ignore' });
  const server: RedisServer = {
    port,
    proc,
    kill: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGKILL');
      }),
  };
  await until(async () => proc.exitCode === null && (await ping(port)), `redis-server on ${port} answering`);
  return server;
}

const dataArgs = (port: number, dir: string) => [
  '--port',
  String(port),
  '--bind',
  '127.0.0.1',
  '--save',
  '',
  '--appendonly',
  'no',
  '--dir',
  dir,
];

/** `primaries` primaries with `replicasEach` replicas each, every slot covered, state ok. */
export async function startRedisCluster(primaries = 3, replicasEach = 1, base = 17000): Promise<RedisClusterSetup> {
  const count = primaries * (1 + replicasEach);
  const ports = Array.from({ length: count }, (_, i) => base + i);
  await claim([...ports, ...ports.map((p) => p + 10000)]);
  const dir = mkdtempSync(join(tmpdir(), 'cg-cluster-'));
  const servers: RedisServer[] = [];
  const stop = async () => {
    for (const s of servers) await s.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      const args = [...dataArgs(port, dir), '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`];
      // A short node timeout: a killed primary is replaced within seconds, not the default 15 s.
      servers.push(await startServer(port, [...args, '--cluster-node-timeout', '2000']));
    }
    const addrs = ports.map((p) => `127.0.0.1:${p}`);
    await run('redis-cli', ['--cluster', 'create', ...addrs, '--cluster-replicas', String(replicasEach), '--cluster-yes']);
    await until(async () => {
      const info = String(await withClient(base, (c) => c.call('CLUSTER', 'INFO')));
      return /cluster_state:ok/.test(info) && /cluster_known_nodes:(\d+)/.exec(info)?.[1] === String(count);
    }, 'cluster state ok');
    // A replica can take over only once its link to its primary is up (the first sync done).
    await until(async () => {
      const infos = await Promise.all(ports.map((p) => withClient(p, (c) => c.info('replication'))));
      const replicas = infos.filter((i) => /^role:slave/m.test(i));
      return replicas.length === primaries * replicasEach && replicas.every((i) => /^master_link_status:up/m.test(i));
    }, 'every replica linked to its primary');
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    nodes: ports.map((p) => `127.0.0.1:${p}`).join(','),
    servers,
    async primaries() {
      const out: Redis[] = [];
      for (const s of servers) {
        if (s.proc.exitCode !== null || s.proc.signalCode !== null) continue;
        const c = new Redis(s.port, '127.0.0.1');
        if (/^role:master/m.test(await c.info('replication'))) out.push(c);
        else c.disconnect();
      }
      return out;
    },
    stop,
  };
}

/** A primary, one replica of it, and three Sentinels (quorum 2) watching it as `master`. */
export async function startSentinels(master = 'cgops', base = 17020, sentinelBase = 26380): Promise<SentinelSetup> {
  const sentinelPorts = [sentinelBase, sentinelBase + 1, sentinelBase + 2];
  await claim([base, base + 1, ...sentinelPorts]);
  const dir = mkdtempSync(join(tmpdir(), 'cg-sentinel-'));
  const servers: RedisServer[] = [];
  const stop = async () => {
    for (const s of servers) await s.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  const ask = <T>(fn: (c: Redis) => Promise<T>): Promise<T> => withClient(sentinelBase, fn);
  try {
    const primary = await startServer(base, dataArgs(base, dir));
    const replica = await startServer(base + 1, [...dataArgs(base + 1, dir), '--replicaof', '127.0.0.1', String(base)]);
    servers.push(primary, replica);
    for (const port of sentinelPorts) {
      // Sentinel rewrites its file as it learns the topology: one writable file per sentinel.
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${master} 127.0.0.1 ${base} 2`,
          `sentinel down-after-milliseconds ${master} 1000`,
          `sentinel failover-timeout ${master} 5000`,
          `sentinel parallel-syncs ${master} 1`,
          '',
        ].join('\n'),
      );
      servers.push(await startServer(port, [conf, '--sentinel']));
    }
    // Ready for a failover once every Sentinel knows the replica and the other two.
    await until(
      () =>
        ask(async (c) => {
          const replicas = (await c.call('SENTINEL', 'REPLICAS', master)) as unknown[];
          const peers = (await c.call('SENTINEL', 'SENTINELS', master)) as unknown[];
          return replicas.length === 1 && peers.length === 2;
        }),
      'sentinels discovering the replica and each other',
    );
    return {
      sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
      master,
      primary,
      replica,
      primaryPort: () => ask(async (c) => Number(((await c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', master)) as string[])[1])),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
