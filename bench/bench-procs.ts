// Child processes for the load benchmarks: the upstream stub, the bare proxy, the load client and
// gateways, each in its own process so none of them shares an event loop with what it measures.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chartGatewayCommand } from '../test/support/gateway-command';
import { startReplica } from '../test/support/replicas';

export interface Proc {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

function stopper(proc: ChildProcess): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
}

/** Runs one of bench/procs/*.cjs and waits for the `PORT n` line it prints. */
export function startScript(script: string, args: string[] = [], nodeArgs: string[] = [], env: Record<string, string> = {}): Promise<Proc> {
  const proc = spawn(process.execPath, [...nodeArgs, join(__dirname, 'procs', script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve({ url: `http://127.0.0.1:${m[1]}`, pid: proc.pid!, stop: stopper(proc) });
    });
  });
}

/**
 * A gateway from the current sources (transpiled on load), with a private DATA_DIR for PGlite;
 * `root`: from another checkout's sources instead (its own `npm ci` done). Node runs with the
 * flags the chart runs the gateway with, then `nodeArgs`.
 */
export async function startGatewayProc(env: Record<string, string>, nodeArgs: string[] = [], root?: string, built = false): Promise<Proc> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cg-bench-'));
  const flags = [...chartGatewayCommand().nodeArgs, ...nodeArgs];
  const r = await startReplica({ DATA_DIR: dataDir, LOG_LEVEL: 'error', ...env }, 120_000, built && 'gateway', flags, '/readyz', root);
  return {
    url: r.url,
    pid: r.proc.pid!,
    async stop() {
      await r.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export async function load(
  url: string,
  bodyFile: string,
  connections: number,
  seconds: number,
  headers: Record<string, string> = {},
): Promise<LoadResult> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(__dirname, 'procs', 'load-client.cjs'), url, bodyFile, String(connections), String(seconds), JSON.stringify(headers)],
    { encoding: 'utf8' },
  );
  const r = JSON.parse(stdout) as LoadResult;
  if (r.non2xx || r.errors) throw new Error(`${r.non2xx} non-2xx and ${r.errors} errors from ${url}`);
  return r;
}

export function writeTemp(name: string, data: string | Buffer): string {
  const file = join(tmpdir(), `cg-bench-${process.pid}-${name}`);
  writeFileSync(file, data);
  return file;
}

/** Resident set size of one process (not its wrapper or children), from /proc. */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line (11 and 12 after the command name).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

const CLOCK_TICKS = 100;
