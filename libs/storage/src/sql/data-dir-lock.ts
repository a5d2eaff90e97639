// One process per embedded database directory: PGlite does not support two processes on one
// directory (a parallel start aborted PGlite at boot). The lock is a file created exclusively
// (O_EXCL) holding the owner's pid and host; a lock whose owner on this host no longer runs (a
// killed process) is taken over, and of two processes racing to take it over exactly one wins.
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { StorageError } from '../storage-errors';

/** The lock sits beside the database directory, never inside it (initdb wants that one empty). */
export const lockFileOf = (dir: string): string => `${path.resolve(dir)}.lock`;

interface Holder {
  pid: number;
  host: string;
  started: string;
}

export class DataDirLockedError extends StorageError {
  constructor(
    readonly dir: string,
    readonly holder: Holder,
  ) {
    super(
      'data_dir_locked',
      `the embedded database in ${dir} is in use by process ${holder.pid} on ${holder.host} (since ${holder.started}); ` +
        'PGlite serves one process per directory. Give this process its own DATA_DIR, or share state through ' +
        `DATABASE_URL (Postgres). If process ${holder.pid} is gone, delete ${lockFileOf(dir)}.`,
    );
    this.name = 'DataDirLockedError';
  }
}

/** Directories this process holds (a second open in the same process is refused too). */
const held = new Set<string>();

function readHolder(file: string): Holder | null {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as Partial<Holder>;
    return typeof v.pid === 'number' && typeof v.host === 'string' ? { pid: v.pid, host: v.host, started: String(v.started ?? '?') } : null;
  } catch {
    return null; // missing, or being written this instant
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

/** Whether the holder is provably gone: on this host, not running (or our own pid from a past life). */
function isStale(h: Holder, dir: string): boolean {
  if (h.host !== hostname()) return false; // cannot tell from here: keep it
  if (h.pid === process.pid) return !held.has(dir); // a restarted container reuses pid 1
  return !isRunning(h.pid);
}

function tryCreate(file: string, me: Holder): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, JSON.stringify(me));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Moves a stale lock aside; if what was moved turned out to be a live lock someone just took, puts it back. */
function takeOver(file: string, stale: Holder): void {
  const aside = `${file}.stale-${process.pid}`;
  try {
    renameSync(file, aside);
  } catch {
    return; // someone else moved it first
  }
  const moved = readHolder(aside);
  if (moved && (moved.pid !== stale.pid || moved.started !== stale.started)) {
    try {
      linkSync(aside, file); // exclusive: never overwrites a lock created meanwhile
    } catch {
      /* a third process holds it now; the moved holder will find its lock replaced */
    }
  }
  unlinkSync(aside);
}

/** Takes the directory's lock or throws DataDirLockedError; the returned function releases it. */
export function lockDataDir(dir: string): () => void {
  const dirKey = path.resolve(dir);
  const file = lockFileOf(dirKey);
  const me: Holder = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  if (held.has(dirKey)) throw new DataDirLockedError(dirKey, me);
  mkdirSync(path.dirname(dirKey), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(file, me)) break;
    const holder = readHolder(file);
    if (holder && !isStale(holder, dirKey)) throw new DataDirLockedError(dirKey, holder);
    if (attempt >= 50) {
      throw new StorageError(
        'data_dir_lock_unreadable',
        `the lock file ${file} names no owning process (corrupt, or written by something else); delete it if no process uses ${dirKey}`,
      );
    }
    if (holder) takeOver(file, holder);
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10); // a lock being written: look again shortly
  }
  held.add(dirKey);
  const release = () => {
    if (!held.delete(dirKey)) return;
    process.off('exit', release);
    const now = readHolder(file);
    if (now && now.pid === me.pid && now.started === me.started) unlinkSync(file);
  };
  process.on('exit', release);
  return release;
}
