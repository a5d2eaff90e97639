// A real PgBouncer (Debian's `pgbouncer`) in transaction pooling mode in front of the test
// Postgres: its own ini, user list and log in a scratch directory, on a free loopback port, every
// database name routed to the server DATABASE_URL names. A small server pool, so consecutive
// transactions of one client really do land on different server connections.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './replicas';

const BASE_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface PgBouncer {
  port: number;
  /** `url` (a database on the test server) as reached through the pooler. */
  through(url: string): string;
  log(): string;
  stop(): Promise<void>;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => s.end(() => resolve(true)));
    s.once('error', () => resolve(false));
  });
}

export async function startPgBouncer(poolSize = 3): Promise<PgBouncer> {
  const server = new URL(BASE_DATABASE_URL);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cg-pgbouncer-'));
  const ini = join(dir, 'pgbouncer.ini');
  const logFile = join(dir, 'pgbouncer.log');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 200',
      // The test server trusts loopback; the pooler only needs to know the user.
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `logfile = ${logFile}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      'ignore_startup_parameters = extra_float_digits',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(logFile, '');
  // PgBouncer refuses to run as root: it drops to the postgres user (-u), which must own its files.
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    chmodSync(dir, 0o755);
    for (const f of [dir, logFile]) chownSync(f, postgresUid(), postgresGid());
  }
  const proc: ChildProcess = spawn('pgbouncer', [...(asRoot ? ['-u', 'postgres'] : []), ini], { stdio: 'ignore' });
  const stop = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (proc.exitCode !== null || proc.signalCode !== null) return done();
      proc.once('exit', done);
      proc.kill('SIGTERM');
    });
  const log = () => readFileSync(logFile, 'utf8');
  for (let i = 0; i < 100 && !(await listening(port)); i++) {
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!(await listening(port))) {
    const text = log();
    await stop();
    throw new Error(`pgbouncer did not start on ${port}:\n${text}`);
  }
  return {
    port,
    through(url) {
      const u = new URL(url);
      u.host = `127.0.0.1:${port}`;
      return u.toString();
    },
    log,
    stop,
  };
}

/** The postgres user's ids, from /etc/passwd (the Debian packages create it). */
function passwdEntry(): string[] {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('no postgres user: install postgresql (scripts/provision-test-env.sh does)');
  return line.split(':');
}
const postgresUid = () => Number(passwdEntry()[2]);
const postgresGid = () => Number(passwdEntry()[3]);
