// Durable writes queued behind the acknowledged hot writes: flushed in batches on a short timer
// and at close, retried with backoff on failure, never failing (or slowing) a request. Bounded by
// count and by bytes, because while Postgres is away the writes pile up here.
//
// Drop policy (docs/storage.md): queued originals (archive entries) are never dropped — a marker
// already emitted may name one whose only other copy is a hot store that expires or evicts it.
// Past the bound the re-derivable writes go first, oldest session first: turn writes (losing one
// costs, after a hot loss too, a turn re-decided: possibly a cache bust), then checkpoints (the
// decisions are re-decided the same way; a hot-only deployment lives with that on every loss).
// Once the originals alone fill the bound, new ones are refused at the source (admitsStash): the
// turn takes the stash-full path and runs again with no new marker. Kept marks (content keys,
// merged per tenant) are neither counted nor dropped.
import type { Arm, TurnRecord } from '@context-guru/components';
import type { ArchivedStash, CheckpointWrite, DurableStore, TurnWrite } from './sql/durable.store';
import { errorText, silentLogger, type StorageLogger } from './storage-logger';
import { TurnCoalescer } from './turn-coalescer';

export interface WriteBehindOptions {
  /** Delay between the first queued write and its flush (default 50 ms). */
  flushMs?: number;
  /** Archive rows per statement (default 500). */
  batchSize?: number;
  /** Pending archive entries past which new originals are refused (default 50 000). */
  maxPending?: number;
  /** Bytes (originals, checkpoints, turn writes) kept while the database is away (default 128 MiB: WRITE_BEHIND_MAX_MB). */
  maxPendingBytes?: number;
  /** Ceiling of the retry backoff (default 5 s). */
  maxBackoffMs?: number;
  log?: StorageLogger;
}

export interface WriteBehindStats {
  pendingStashes: number;
  /** What the pending archive entries hold (stashEntryBytes summed). */
  pendingStashBytes: number;
  pendingCheckpoints: number;
  pendingKept: number;
  /** What the pending checkpoints and turn writes hold (estimated), the part the bound may drop. */
  pendingDerivedBytes: number;
  flushes: number;
  failures: number;
  /** Re-derivable writes dropped at the bound, by kind (originals never are). */
  dropped: Record<DroppedKind, number>;
  /** Turns whose new originals were refused because originals alone filled the bound. */
  refused: number;
}

export type DroppedKind = 'checkpoints' | 'turns';

/** Default bound of the pending archive bytes: an eighth of the chart's 1 GiB gateway limit. */
const DEFAULT_WRITE_BEHIND_MAX_BYTES = 128 * 1024 * 1024;
/** Per-entry bookkeeping besides its strings (the object, the array slot). */
const ENTRY_OVERHEAD_BYTES = 96;
/** A turn write's record and map slot, besides its key and rewritten indexes. */
const TURN_WRITE_BYTES = 160;

/**
 * The memory one pending archive entry holds, estimated from its characters (V8 keeps ASCII one
 * byte per character; length is O(1), where a UTF-8 byte count would rescan every original).
 * @internal exported for tests
 */
export function stashEntryBytes(e: ArchivedStash): number {
  return e.text.length + e.id.length + e.session.length + e.tenant.length + ENTRY_OVERHEAD_BYTES;
}

type MergedCheckpoint = CheckpointWrite & { frozen: Map<string, string> };

function checkpointBytes(w: CheckpointWrite): number {
  let n = w.tenant.length + w.session.length + ENTRY_OVERHEAD_BYTES;
  for (const [slot, r] of w.frozen) n += slot.length + r.length + ENTRY_OVERHEAD_BYTES;
  return n;
}

function turnWriteBytes(w: TurnWrite): number {
  return w.tenant.length + w.session.length + TURN_WRITE_BYTES + 8 * (w.rewritten?.length ?? w.turn?.rewritten?.length ?? 0);
}

/** What one flush writes. */
interface Batch {
  stashes: readonly ArchivedStash[];
  checkpoints: ReadonlyMap<string, CheckpointWrite>;
  turns: ReadonlyMap<string, TurnWrite>;
}

export class WriteBehindQueue {
  private stashes: ArchivedStash[] = [];
  /** stashEntryBytes of `stashes`, kept in step with it. */
  private stashBytes = 0;
  /** checkpointBytes and turnWriteBytes of `checkpoints` and `turns`, kept in step with them. */
  private derivedBytes = 0;
  /** Bytes of the writes a flush holds: they count against the bound until written. */
  private flushingBytes = 0;
  /** Of which the flush's archive entries (the part that cannot be dropped). */
  private flushingStashBytes = 0;
  private flushingStashes = 0;
  /** Per tenant, the bytes (as the archive will store them) of originals queued and not yet written. */
  private readonly tenantBytes = new Map<string, number>();
  /** tenant\0session → merged writes (later replacements win). */
  private checkpoints = new Map<string, MergedCheckpoint>();
  private kept = new Map<string, Set<string>>();
  /** tenant\0session → the latest turn write (a new turn replaces pending rewrites). */
  private turns = new Map<string, TurnWrite>();
  /**
   * The batch a flush took, until its statements are done: a look-up meanwhile (a hot loss in
   * that window) still finds a write that is neither queued nor stored yet.
   */
  private flushing: Batch | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private backoffMs = 0;
  private closed = false;
  private readonly stats_ = { flushes: 0, failures: 0, refused: 0, dropped: { checkpoints: 0, turns: 0 } };
  private readonly o: Required<Omit<WriteBehindOptions, 'log'>> & { log: StorageLogger };
  /** The database's only writer leaves out turn writes that would only slide a row's `at` a little. */
  private readonly coalescer: TurnCoalescer | undefined;

  constructor(
    private readonly durable: DurableStore,
    o: WriteBehindOptions = {},
  ) {
    this.o = {
      flushMs: 50,
      batchSize: 500,
      maxPending: 50_000,
      maxPendingBytes: DEFAULT_WRITE_BEHIND_MAX_BYTES,
      maxBackoffMs: 5000,
      log: silentLogger,
      ...o,
    };
    this.coalescer = durable.sql.exclusive ? new TurnCoalescer() : undefined;
  }

  enqueueStash(entries: readonly ArchivedStash[]): void {
    this.stashes.push(...entries);
    for (const e of entries) this.stashBytes += stashEntryBytes(e);
    this.countBytes(entries, 1);
    this.bound();
    this.schedule();
  }

  /**
   * Whether `entries` fit beside the originals queued and being flushed (the re-derivable writes
   * make room by being dropped). False counts a refusal: the caller refuses the turn's new originals.
   */
  admitsStash(entries: readonly ArchivedStash[]): boolean {
    const bytes = entries.reduce((n, e) => n + stashEntryBytes(e), 0);
    const count = this.stashes.length + this.flushingStashes + entries.length;
    if (count <= this.o.maxPending && this.stashBytes + this.flushingStashBytes + bytes <= this.o.maxPendingBytes) return true;
    this.stats_.refused++;
    this.o.log.warn('write-behind queue full of originals: new ones refused', { pendingBytes: this.stashBytes + this.flushingStashBytes });
    return false;
  }

  /**
   * Drops the oldest re-derivable writes (turn writes, then checkpoints) while everything queued,
   * with what an unfinished flush holds, is past the bytes bound. Originals are never dropped.
   */
  private bound(): void {
    const dropped = {
      turns: this.dropWhileOver(this.turns, turnWriteBytes),
      checkpoints: this.dropWhileOver(this.checkpoints, checkpointBytes),
    };
    if (dropped.turns + dropped.checkpoints === 0) return;
    this.stats_.dropped.turns += dropped.turns;
    this.stats_.dropped.checkpoints += dropped.checkpoints;
    this.o.log.warn('write-behind queue full: re-derivable writes dropped', { ...dropped, pendingBytes: this.stashBytes });
  }

  /** Drops `writes`' oldest (Map order) while the queue is past its bytes bound; how many. */
  private dropWhileOver<W>(writes: Map<string, W>, bytes: (w: W) => number): number {
    let n = 0;
    for (const [k, w] of writes) {
      if (this.stashBytes + this.derivedBytes + this.flushingBytes <= this.o.maxPendingBytes) break;
      writes.delete(k);
      this.derivedBytes -= bytes(w);
      n++;
    }
    return n;
  }

  enqueueCheckpoint(tenant: string, session: string, frozen: ReadonlyMap<string, string>, offloaded: boolean, arm?: Arm): void {
    const key = `${tenant}\u0000${session}`;
    let w = this.checkpoints.get(key);
    if (w) this.derivedBytes -= checkpointBytes(w);
    else this.checkpoints.set(key, (w = { tenant, session, frozen: new Map(), offloaded: false }));
    for (const [slot, r] of frozen) w.frozen.set(slot, r);
    w.offloaded ||= offloaded;
    w.arm ??= arm;
    this.derivedBytes += checkpointBytes(w);
    this.bound();
    this.schedule();
  }

  enqueueKept(tenant: string, contentKeys: readonly string[]): void {
    let s = this.kept.get(tenant);
    if (!s) this.kept.set(tenant, (s = new Set()));
    for (const ck of contentKeys) s.add(ck);
    this.schedule();
  }

  enqueueTurn(tenant: string, session: string, turn: TurnRecord): void {
    this.setTurn(`${tenant}\u0000${session}`, { tenant, session, turn });
  }

  /** Rewrites of the turn that started at `at` (merged into that turn's pending write if queued). */
  enqueueRewrites(tenant: string, session: string, rewritten: readonly number[], at: number): void {
    const key = `${tenant}\u0000${session}`;
    const w = this.turns.get(key);
    this.setTurn(key, w && (!w.turn || w.turn.at === at) ? { ...w, rewritten, at } : { tenant, session, rewritten, at });
  }

  /** A turn write replacing the session's pending one; a re-set moves it to the newest end. */
  private setTurn(key: string, w: TurnWrite): void {
    const old = this.turns.get(key);
    if (old) this.derivedBytes -= turnWriteBytes(old);
    this.turns.delete(key);
    this.turns.set(key, w);
    this.derivedBytes += turnWriteBytes(w);
    this.bound();
    this.schedule();
  }

  /** A turn write not yet flushed (read before the database when the hot copy is gone). */
  pendingTurn(tenant: string, session: string): TurnWrite | undefined {
    const key = `${tenant}\u0000${session}`;
    return this.turns.get(key) ?? this.flushing?.turns.get(key);
  }

  /** Bytes of the tenant's originals queued and not yet archived (the archive budget counts them as used). */
  queuedStashBytes(tenant: string): number {
    return this.tenantBytes.get(tenant) ?? 0;
  }

  /** Kept for the database's only writer, whose budget check reads it (a shared database's check is locked in SQL). */
  private countBytes(entries: readonly ArchivedStash[], sign: 1 | -1): void {
    if (!this.durable.sql.exclusive) return;
    for (const e of entries) {
      const n = (this.tenantBytes.get(e.tenant) ?? 0) + sign * this.durable.stashBytes.storedBytes(e.text);
      if (n > 0) this.tenantBytes.set(e.tenant, n);
      else this.tenantBytes.delete(e.tenant);
    }
  }

  /** A queued original not yet archived (an expand right after a hot loss still resolves). */
  pendingStash(tenant: string, id: string): ArchivedStash | undefined {
    const match = (e: ArchivedStash) => e.tenant === tenant && e.id === id;
    return this.stashes.findLast(match) ?? this.flushing?.stashes.findLast(match);
  }

  /** Checkpoint writes not yet stored: the batch being flushed, with what was queued since over it. */
  pendingCheckpoint(tenant: string, session: string): CheckpointWrite | undefined {
    const key = `${tenant}\u0000${session}`;
    const queued = this.checkpoints.get(key);
    const flushing = this.flushing?.checkpoints.get(key);
    if (!flushing) return queued;
    if (!queued) return flushing;
    return {
      tenant,
      session,
      frozen: new Map([...flushing.frozen, ...queued.frozen]),
      offloaded: flushing.offloaded || queued.offloaded,
      ...((flushing.arm ?? queued.arm) && { arm: flushing.arm ?? queued.arm }),
    };
  }

  stats(): WriteBehindStats {
    let pendingKept = 0;
    for (const s of this.kept.values()) pendingKept += s.size;
    return {
      pendingStashes: this.stashes.length,
      pendingStashBytes: this.stashBytes,
      pendingCheckpoints: this.checkpoints.size,
      pendingKept,
      pendingDerivedBytes: this.derivedBytes,
      ...this.stats_,
      dropped: { ...this.stats_.dropped },
    };
  }

  /** Writes everything queued so far; resolves when done or when the attempt failed (re-queued). */
  flush(): Promise<void> {
    if (this.inFlight) return this.inFlight.then(() => (this.isEmpty() ? undefined : this.flush()));
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlight = this.flushOnce().finally(() => {
      this.inFlight = undefined;
      if (!this.isEmpty()) this.schedule();
    });
    return this.inFlight;
  }

  /** Flushes what is queued (one attempt per retry, up to `attempts`) and stops the timer. */
  async close(attempts = 3): Promise<void> {
    this.closed = true;
    for (let i = 0; i < attempts && !this.isEmpty(); i++) await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.isEmpty()) this.o.log.error('durable writes lost at close', { ...this.stats() });
  }

  private isEmpty(): boolean {
    return this.stashes.length === 0 && this.checkpoints.size === 0 && this.kept.size === 0 && this.turns.size === 0;
  }

  private schedule(): void {
    if (this.timer || this.inFlight || this.closed) return;
    this.timer = setTimeout(() => void this.flush(), this.o.flushMs + this.backoffMs);
    this.timer.unref();
  }

  private async saveTurns(queued: TurnWrite[]): Promise<void> {
    const writes = this.coalescer ? this.coalescer.needed(queued) : queued;
    if (writes.length > 0) await this.durable.saveTurns(writes);
    this.coalescer?.written(writes);
  }

  private async flushOnce(): Promise<void> {
    const stashes = this.stashes;
    const checkpoints = this.checkpoints;
    const kept = this.kept;
    const turns = this.turns;
    this.flushing = { stashes, checkpoints, turns };
    this.flushingBytes = this.stashBytes + this.derivedBytes;
    this.flushingStashBytes = this.stashBytes;
    this.flushingStashes = stashes.length;
    try {
      await this.write(stashes, checkpoints, kept, turns);
    } finally {
      this.flushing = undefined;
      this.flushingBytes = this.flushingStashBytes = this.flushingStashes = 0;
    }
  }

  private async write(
    stashes: ArchivedStash[],
    checkpoints: Map<string, MergedCheckpoint>,
    kept: Map<string, Set<string>>,
    turns: Map<string, TurnWrite>,
  ): Promise<void> {
    this.stashes = [];
    this.stashBytes = 0;
    this.derivedBytes = 0;
    this.checkpoints = new Map();
    this.kept = new Map();
    this.turns = new Map();
    let stage = 'archive';
    let done = 0;
    try {
      for (; done < stashes.length; done += this.o.batchSize) {
        const slice = stashes.slice(done, done + this.o.batchSize);
        await this.durable.archiveStash(slice);
        this.countBytes(slice, -1);
      }
      stage = 'checkpoint';
      if (checkpoints.size > 0) await this.durable.saveCheckpoints([...checkpoints.values()]);
      checkpoints.clear();
      stage = 'kept';
      for (const [tenant, cks] of kept) {
        await this.durable.markKept(tenant, [...cks]);
        kept.delete(tenant);
      }
      stage = 'turns';
      await this.saveTurns([...turns.values()]);
      turns.clear();
      this.stats_.flushes++;
      this.backoffMs = 0;
    } catch (err) {
      this.stats_.failures++;
      this.backoffMs = Math.min(this.o.maxBackoffMs, Math.max(100, this.backoffMs * 2));
      this.o.log.warn('durable write failed; will retry', { stage, err: errorText(err), retryInMs: this.o.flushMs + this.backoffMs });
      // Re-queue what was not written, ahead of anything queued meanwhile (newer writes win).
      this.stashes = [...stashes.slice(done), ...this.stashes];
      this.stashBytes = this.stashes.reduce((n, e) => n + stashEntryBytes(e), 0);
      // The batch is queued again: counted once, in the queue's own figures.
      this.flushingBytes = this.flushingStashBytes = this.flushingStashes = 0;
      for (const [k, w] of checkpoints) {
        const newer = this.checkpoints.get(k);
        if (newer) for (const [slot, r] of newer.frozen) w.frozen.set(slot, r);
        w.offloaded ||= newer?.offloaded ?? false;
        w.arm ??= newer?.arm;
        this.checkpoints.set(k, w);
      }
      for (const [tenant, cks] of kept) {
        const s = this.kept.get(tenant) ?? new Set<string>();
        for (const ck of cks) s.add(ck);
        this.kept.set(tenant, s);
      }
      for (const [k, w] of turns) if (!this.turns.has(k)) this.turns.set(k, w);
      this.derivedBytes = 0;
      for (const w of this.checkpoints.values()) this.derivedBytes += checkpointBytes(w);
      for (const w of this.turns.values()) this.derivedBytes += turnWriteBytes(w);
      this.bound();
    }
  }
}
