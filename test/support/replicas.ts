// Real gateway processes for multi-replica tests: each replica is `node apps/gateway/src/main.ts`
// (transpiled on load, no build needed) with CG_ROLE=gateway, sharing Redis and Postgres.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface Replica {
  url: string;
  proc: ChildProcess;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Waits until `path` answers 200: /readyz (ready), or /healthz (up, ready or not). */
async function waitReady(url: string, proc: ChildProcess, timeoutMs: number, path = '/readyz'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`replica exited with ${proc.exitCode}`);
    try {
      const res = await fetch(`${url}${path}`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`replica at ${url} not ready after ${timeoutMs} ms`);
}

/**
 * `built`: run the built process entry of that app (apps/<app>/dist/main.js, needs `npm run
 * build`), as production does: 'gateway' is `npm run start:gateway`, 'embedded' is `npm start`
 * (gateway and admin in one process; its gateway port is PORT). `until`: return once it is ready
 * (default) or once it is up, ready or not (/healthz). `root`: another checkout's gateway (a
 * benchmark comparing two trees in one run).
 */
export async function startReplica(
  env: Record<string, string>,
  timeoutMs = 60_000,
  built: false | 'gateway' | 'embedded' = false,
  nodeArgs: string[] = [],
  until: '/readyz' | '/healthz' = '/readyz',
  root = ROOT,
): Promise<Replica> {
  const port = await freePort();
  const entry = built
    ? [join(root, 'apps', built, 'dist', 'main.js')]
    : ['-r', join(root, 'scripts', 'register-ts.cjs'), join(root, 'apps', 'gateway', 'src', 'main.ts')];
  const proc = spawn(process.execPath, [...nodeArgs, ...entry], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', CG_ROLE: 'gateway', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(url, proc, timeoutMs, until);
  } catch (e) {
    proc.kill('SIGKILL');
    throw new Error(`${(e as Error).message}\n${err}`, { cause: e });
  }
  return {
    url,
    proc,
    stderr: () => err,
    stop: (signal = 'SIGTERM') =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill(signal);
      }),
  };
}

export interface PrivateRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** A new, empty server on the same port (a restart without persistence). */
  restart(): Promise<void>;
}

function spawnRedis(port: number): ChildProcess {
  // Outside the checkout: a test that makes one private server a replica of another has an RDB written.
  const files = ['--dir', tmpdir(), '--dbfilename', `cg-test-redis-${port}.rdb`];
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...files], {
    stdio: 'ignore',
  });
}

function stopProc(proc: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

/**
 * A private redis-server, so FLUSHALL and restarts never disturb other tests. Its port is free
 * when picked, not when the server binds: a suite running beside this one may take it first, and
 * a bare connect check would then succeed on THAT suite's server (which may FLUSHALL). So the
 * server answering must report our child's pid; otherwise the child is stopped and another port
 * tried.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let proc = spawnRedis(port);
    const url = `redis://127.0.0.1:${port}`;
    const stop = () => stopProc(proc);
    const restart = async () => {
      await stop();
      proc = spawnRedis(port);
      if (!(await answersAs(port, proc))) throw new Error(`private redis did not restart on port ${port}`);
    };
    if (await answersAs(port, proc)) return { url, port, stop, restart };
    await stop();
    if (attempt >= 5) throw new Error('private redis did not start');
  }
}

/** Whether the redis-server on `port` is `proc` (its INFO names proc's pid), waiting up to 10 s. */
async function answersAs(port: number, proc: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) return false;
    const info = await redisInfo(port);
    if (info !== undefined) return new RegExp(`^process_id:${proc.pid}\\r?$`, 'm').test(info);
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** `INFO server` over a raw socket: the bulk reply's text (undefined while nothing answers on the port). */
function redisInfo(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let reply = '';
    const sock = connect(port, '127.0.0.1', () => sock.write('INFO server\r\n'));
    sock.setEncoding('utf8');
    // A server still loading answers an error line; one that says nothing is given up on.
    sock.setTimeout(1000, () => sock.destroy());
    sock.on('data', (chunk: string) => {
      reply += chunk;
      const head = /^\$(\d+)\r\n/.exec(reply);
      const whole = head?.[1] !== undefined && reply.length >= head[0].length + Number(head[1]);
      if (whole || (reply.startsWith('-') && reply.includes('\r\n'))) sock.end();
    });
    sock.on('error', () => resolve(undefined));
    sock.on('close', () => resolve(reply || undefined));
  });
}
