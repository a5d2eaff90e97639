// One process per embedded database directory, proven with real processes: a second one is
// refused at once naming the holder and the two ways out; a killed holder's lock is taken over.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { lockDataDir, lockFileOf } from '@context-guru/storage';

const ROOT = path.join(__dirname, '../../..');
const REGISTER = path.join(ROOT, 'scripts/register-ts.cjs');
const HOLDER = path.join(ROOT, 'test/support/pglite-holder.ts');

interface Run {
  child: ChildProcess;
  out: string;
  err: string;
  exited: Promise<number | null>;
}

function run(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, ['-r', REGISTER, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const r: Run = { child, out: '', err: '', exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  child.stdout!.on('data', (c: Buffer) => (r.out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (r.err += c.toString()));
  return r;
}

async function ready(r: Run): Promise<void> {
  while (!r.out.includes('ready')) {
    if (r.child.exitCode !== null) throw new Error(`holder exited: ${r.err}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

let base: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  base = mkdtempSync(path.join(tmpdir(), 'cg-lock-'));
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

describe('the DATA_DIR lock', () => {
  it('refuses a second process at once naming the holder, then serves after the holder is killed', async () => {
    const dir = path.join(base, 'pglite');
    const first = run([HOLDER, dir]);
    children.push(first.child);
    await ready(first);
    const second = run([HOLDER, dir]);
    children.push(second.child);
    expect(await second.exited).toBe(1);
    expect(second.err).toContain(`process ${first.child.pid}`);
    expect(second.err).toContain('DATA_DIR');
    expect(second.err).toContain('DATABASE_URL');
    expect(first.child.exitCode).toBeNull(); // the holder is unharmed
    // Killed without a chance to clean up: its lock stays behind, and is taken over.
    first.child.kill('SIGKILL');
    await first.exited;
    expect(JSON.parse(readFileSync(lockFileOf(dir), 'utf8')).pid).toBe(first.child.pid);
    const third = run([HOLDER, dir]);
    children.push(third.child);
    await ready(third);
    expect(JSON.parse(readFileSync(lockFileOf(dir), 'utf8')).pid).toBe(third.child.pid);
  });

  it('of processes racing for a stale lock, exactly one wins', async () => {
    const dir = path.join(base, 'pglite');
    // A lock left by a pid that cannot be running (above the kernel's pid_max).
    writeFileSync(lockFileOf(dir), JSON.stringify({ pid: 99_999_999, host: hostname(), started: 'long ago' }));
    const racers = [0, 1].map(() => run([HOLDER, dir]));
    children.push(...racers.map((r) => r.child));
    const outcome = await Promise.all(racers.map((r) => Promise.race([r.exited.then(() => 'refused'), ready(r).then(() => 'holds')])));
    expect(outcome.filter((o) => o === 'holds')).toHaveLength(1);
    expect(outcome.filter((o) => o === 'refused')).toHaveLength(1);
  });

  it('makes `npm start` (the embedded process) exit at once with the message, before opening anything', async () => {
    const dataDir = path.join(base, 'data');
    const release = lockDataDir(path.join(dataDir, 'pglite')); // this test process holds it
    try {
      const gw = run([path.join(ROOT, 'apps/embedded/src/main.ts')], {
        DATA_DIR: dataDir,
        PORT: '0',
        ADMIN_PORT: '0',
        REDIS_URL: '',
        DATABASE_URL: '',
        HOT_STORE: '',
        DURABLE_STORE: '',
      });
      children.push(gw.child);
      expect(await gw.exited).toBe(1);
      expect(gw.err).toContain(
        `context-guru cannot start: the embedded database in ${path.join(dataDir, 'pglite')} is in use by process ${process.pid}`,
      );
      expect(gw.err).not.toMatch(/\n\s+at /); // a message, not a stack trace
    } finally {
      release();
    }
    expect(existsSync(lockFileOf(path.join(dataDir, 'pglite')))).toBe(false);
  });
});
