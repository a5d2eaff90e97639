// TLS-only servers of the test's own, with a throwaway private CA made by the `openssl` CLI
// (node:crypto cannot sign X.509): a redis-server that listens on a TLS port only (`--port 0`),
// and a PostgreSQL cluster (initdb into a scratch directory) whose pg_hba accepts `hostssl` only,
// so a client that does not speak TLS is turned away rather than served in plaintext. Free
// loopback ports; everything lives in one scratch directory removed on stop(). As root, the
// cluster runs as the `postgres` OS user (initdb and the server refuse root), via runuser.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './replicas';

const run = promisify(execFile);

export interface Ca {
  /** The CA certificate (PEM file): what a client trusts. */
  cert: string;
  key: string;
}

export interface ServerCert {
  cert: string;
  key: string;
}

/** A scratch directory for certificates and data; removed with everything in it. */
export function scratchDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'cg-tls-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A self-signed CA (P-256, one day). */
export async function makeCa(dir: string, name: string): Promise<Ca> {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  await run('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', `/CN=${name}`, '-keyout', key, '-out', cert,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]); // prettier-ignore
  return { cert, key };
}

/** A server certificate signed by `ca` for the IP addresses `ips` (its only names). */
export async function serverCert(dir: string, ca: Ca, name: string, ips: readonly string[]): Promise<ServerCert> {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.pem`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, `basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=${ips.map((ip) => `IP:${ip}`).join(',')}\n`);
  await run('openssl', [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    key,
    '-out',
    csr,
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    ext,
    '-out',
    cert,
  ]);
  return { cert, key };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stopped(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

export interface TlsRedis {
  /** rediss://127.0.0.1:<port> */
  url: string;
  stop(): Promise<void>;
}

/** redis-server on a TLS port only, presenting `server` (clients are not asked for certificates). */
export async function startTlsRedis(dir: string, ca: Ca, server: ServerCert): Promise<TlsRedis> {
  const port = await freePort();
  const proc = spawn(
    'redis-server',
    [
      '--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1',
      '--tls-cert-file', server.cert, '--tls-key-file', server.key, '--tls-ca-cert-file', ca.cert, '--tls-auth-clients', 'no',
      '--save', '', '--appendonly', 'no', '--dir', dir,
    ], // prettier-ignore
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  proc.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  const url = `rediss://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) break;
    const c = new Redis(url, {
      tls: { ca: await readText(ca.cert) },
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    c.on('error', () => undefined);
    const up = await c
      .connect()
      .then(() => c.ping())
      .then((r) => r === 'PONG')
      .catch(() => false);
    c.disconnect();
    if (up) return { url, stop: () => stopped(proc) };
    await sleep(100);
  }
  await stopped(proc);
  throw new Error(`redis-server with TLS did not start on ${port} (built without TLS? redis-server --version): ${log}`);
}

const readText = (path: string): Promise<string> => readFile(path, 'utf8');

export interface TlsPostgres {
  port: number;
  /** postgres://postgres@<host>:<port>/postgres, no TLS parameters: the caller adds them. */
  url(host?: string): string;
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL's bin directory (Debian: /usr/lib/postgresql/<major>/bin). */
function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const majors = readdirSync(base)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(a) - Number(b));
  const newest = majors[majors.length - 1];
  if (!newest) throw new Error(`no PostgreSQL under ${base}: install postgresql (scripts/provision-test-env.sh does)`);
  return join(base, newest, 'bin');
}

/** As root: the postgres OS user's ids (initdb and postgres refuse to run as root). */
function postgresIds(): { uid: number; gid: number } {
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!entry) throw new Error('running as root, the TLS Postgres test needs the postgres OS user (Debian: apt-get install postgresql)');
  const [, , uid, gid] = entry.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * A cluster of its own, TLS-only (`ssl=on`, pg_hba `hostssl … trust`, no `host` line), listening
 * on `listen` addresses at a free port. As root it is owned and run by the postgres OS user.
 */
export async function startTlsPostgres(dir: string, server: ServerCert, listen: readonly string[] = ['127.0.0.1']): Promise<TlsPostgres> {
  const bin = postgresBin();
  const data = join(dir, 'pgdata');
  const asRoot = userInfo().uid === 0;
  const ids = asRoot ? postgresIds() : undefined;
  // The server reads its key only when it alone may: owned by the user it runs as, mode 0600.
  if (ids) for (const f of [dir, server.cert, server.key]) chownSync(f, ids.uid, ids.gid);
  const as = (cmd: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args));
  await as(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  writeFileSync(join(data, 'pg_hba.conf'), listen.map((a) => `hostssl all all ${a}/32 trust\n`).join(''));
  if (ids) chownSync(join(data, 'pg_hba.conf'), ids.uid, ids.gid);
  const port = await freePort();
  const options = [
    `-p ${port}`, `-c listen_addresses=${listen.join(',')}`, `-k ${dir}`, '-c fsync=off', '-c ssl=on',
    `-c ssl_cert_file=${server.cert}`, `-c ssl_key_file=${server.key}`,
  ].join(' '); // prettier-ignore
  const log = join(dir, 'postgres.log');
  await as(join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '30', '-o', options, 'start']).catch(async (err: unknown) => {
    throw new Error(`TLS postgres did not start: ${String(err)}\n${await readText(log).catch(() => '')}`, { cause: err });
  });
  return {
    port,
    url: (host = '127.0.0.1') => `postgres://postgres@${host}:${port}/postgres`,
    stop: async () => {
      await as(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    },
  };
}
