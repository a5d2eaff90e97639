// Hot store in front, durable store behind: requests are acknowledged by the hot store and the
// durable copy follows in batches; a hot loss (eviction, expiry, Redis restart or FLUSHDB) is
// repaired from the archive and the checkpoint, so a marker still resolves and a frozen decision
// replays byte-identically instead of flipping a cached prefix. While the hot store does not answer,
// the durable copies serve alone (see HotDebt).
import {
  deleteOldest,
  type HotStore,
  type SessionSnapshot,
  type SessionWrites,
  type StashEntry,
  type StoreHealth,
  type TurnRecord,
  type TurnWrites,
} from '@context-guru/components';
import { addCounts, ArchiveBudget, refusedSnapshot } from './archive-budget';
import { commitTurnInParts } from './commit-turn';
import { HotDebt } from './hot-debt';
import { RecentSet } from './recent-set';
import { answersAlone, archivedAs, newest } from './tiered-snapshot';
import { checkpointKnows, checkpointOf, repairFromCheckpoint } from './tiered-checkpoint';
import type { DurableStore } from './sql/durable.store';
import { StorageError } from './storage-errors';
import { errorText, silentLogger, type StorageLogger } from './storage-logger';
import { WriteBehindQueue, type WriteBehindOptions, type WriteBehindStats } from './write-behind.queue';
import { eraseSession, eraseTenant } from './sql/erase';

/** Adapters that can re-warm an archived original without inventing an ownership record. */
export interface StashWarmer {
  warmStash(tenant: string, entries: readonly StashEntry[]): Promise<void>;
}

export interface TieredHotStoreOptions extends WriteBehindOptions {
  /** Bytes of originals each tenant may keep in the archive (0 or absent: bounded by retention only). */
  archiveMaxBytes?: number;
}

/**
 * A write both stores refused rejects with the hot store's failure, the one the caller wrote to.
 * A hot adapter that rejected with something other than an Error did not answer: the caller
 * (the gateway fails open on it) sees `store_unavailable`.
 */
function hotFailure(err: unknown): Error {
  return err instanceof Error ? err : new StorageError('store_unavailable', `hot store failed: ${String(err)}`, { cause: err });
}

const ARCHIVED_MEMO_SIZE = 100_000;
const HOT_ALONE_SESSIONS = 100_000;
/** Re-archive at least this often: retention counts from the last archive write. */
const ARCHIVED_MEMO_MS = 6 * 3_600_000;

export class TieredHotStore implements HotStore {
  readonly kind: string;
  readonly persistent = true;
  readonly queue: WriteBehindQueue;
  readonly log: StorageLogger;
  /** Losses only the checkpoint revealed (the hot store never saw them go) and their repairs. */
  private restored = 0;
  /** The turn this replica last advanced each conversation to: its rewrites belong to it. */
  private readonly turnAt = new Map<string, TurnRecord>();
  private readonly archivedLately = new RecentSet(ARCHIVED_MEMO_SIZE, ARCHIVED_MEMO_MS);
  /** Sessions whose last load the hot store answered alone (the archive and checkpoint unread). */
  private readonly hotAlone = new Set<string>();
  /** Sessions served from the durable store alone while the hot store was away, to repair hot. */
  readonly debt: HotDebt;
  private readonly budget: ArchiveBudget;

  constructor(
    readonly hot: HotStore & Partial<StashWarmer>,
    readonly durable: DurableStore,
    o: TieredHotStoreOptions = {},
  ) {
    this.kind = `${hot.kind}+${durable.kind}`;
    this.log = o.log ?? silentLogger;
    this.queue = new WriteBehindQueue(durable, o);
    this.budget = new ArchiveBudget(o.archiveMaxBytes ?? 0, durable, this.queue, this.log);
    this.debt = new HotDebt({ hot, log: this.log, checkpoint: (t, s, kept) => checkpointOf(this, t, s, kept, undefined) });
  }

  async putStash(tenant: string, session: string, entries: readonly StashEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const hotErr = await this.hotCall(tenant, session, () => this.hot.putStash(tenant, session, entries));
    if (hotErr === undefined) return this.stashBehind(tenant, session, entries);
    // Hot store away: acknowledge through the archive itself so the marker stays resolvable.
    await this.durable.archiveStash(archivedAs(tenant, session, entries)).catch(() => Promise.reject(hotFailure(hotErr)));
  }

  /** A replayed decision re-puts its original every turn; only what this process has not archived lately goes behind. */
  private stashBehind(tenant: string, session: string, entries: readonly StashEntry[]): void {
    const fresh = entries.filter((e) => this.archivedLately.add(`${tenant}\u0000${session}\u0000${e.id}`));
    if (fresh.length > 0) this.queue.enqueueStash(archivedAs(tenant, session, fresh));
  }

  async getStash(tenant: string, id: string): Promise<string | null> {
    let hotErr: unknown;
    try {
      const hit = this.debt.away ? null : await this.hot.getStash(tenant, id);
      if (hit !== null) return hit;
      if (this.debt.away) hotErr = this.debt.lastFailure ?? new StorageError('store_unavailable', 'hot store away');
    } catch (err) {
      hotErr = err;
      this.debt.fail(err);
    }
    const text = this.queue.pendingStash(tenant, id)?.text ?? (await this.fromArchive(tenant, id, hotErr));
    if (text !== null && hotErr === undefined && this.hot.warmStash) {
      await this.hot
        .warmStash(tenant, [{ id, text }])
        .catch((err: unknown) => this.log.warn('stash re-warm failed', { err: errorText(err) }));
    }
    return text;
  }

  async owns(tenant: string, session: string, id: string): Promise<boolean> {
    try {
      if (!this.debt.away && (await this.hot.owns(tenant, session, id))) return true;
    } catch (err) {
      this.debt.fail(err);
    }
    if (this.queue.pendingStash(tenant, id)?.session === session) return true;
    return this.durable.owns(tenant, session, id);
  }

  async loadSession(tenant: string, session: string, contentKeys: readonly string[]): Promise<SessionSnapshot> {
    const key = `${tenant}\u0000${session}`;
    this.hotAlone.delete(key);
    let snap: SessionSnapshot | undefined;
    await this.hotCall(tenant, session, async () => void (snap = await this.hot.loadSession(tenant, session, contentKeys)));
    if (!snap) {
      // The durable copies answer alone: the checkpoint with the writes still queued for it.
      const cp = await checkpointOf(this, tenant, session, contentKeys, contentKeys);
      return { frozen: cp.frozen, lost: new Set(), kept: cp.kept, offloaded: cp.offloaded, ...(cp.arm ? { arm: cp.arm } : {}) };
    }
    if (answersAlone(snap)) {
      this.hotAlone.add(key);
      if (this.hotAlone.size > HOT_ALONE_SESSIONS) deleteOldest(this.hotAlone);
    }
    return this.completed(tenant, session, contentKeys, snap);
  }

  /**
   * The hot store's stamp, for a session whose last load it answered alone: while the stamp holds
   * the hot answer is the same, so the durable store is not consulted either. Otherwise none.
   */
  sessionStamp(tenant: string, session: string): number | undefined {
    return this.hotAlone.has(`${tenant}\u0000${session}`) ? this.hot.sessionStamp?.(tenant, session) : undefined;
  }

  /**
   * The hot store's answer, completed: when it knows this session (decisions, the sticky flag or
   * its arm) and lost nothing, as is; otherwise the session is new, or its hot state vanished (a
   * flush leaves no trace), and the checkpoint fills the gap.
   */
  private async completed(
    tenant: string,
    session: string,
    contentKeys: readonly string[],
    snap: SessionSnapshot,
  ): Promise<SessionSnapshot> {
    if (answersAlone(snap)) return snap;
    try {
      this.restored += await repairFromCheckpoint(this, tenant, session, contentKeys, snap);
    } catch (err) {
      this.log.warn('checkpoint lookup failed; serving the hot snapshot', { err: errorText(err) });
    }
    return snap;
  }

  async commitSession(tenant: string, session: string, writes: SessionWrites): Promise<void> {
    if (writes.frozen.size === 0 && !writes.offloaded && !writes.arm) return;
    const hotErr = await this.hotCall(tenant, session, () => this.hot.commitSession(tenant, session, writes));
    if (hotErr === undefined) return this.queue.enqueueCheckpoint(tenant, session, writes.frozen, writes.offloaded, writes.arm);
    await this.durable
      .saveCheckpoint(tenant, session, writes.frozen, writes.offloaded, writes.arm)
      .catch(() => Promise.reject(hotFailure(hotErr)));
    this.debt.wrote(tenant, session);
  }

  async markKept(tenant: string, contentKeys: readonly string[]): Promise<void> {
    if (contentKeys.length === 0) return;
    const hotErr = await this.hotCall(tenant, undefined, () => this.hot.markKept(tenant, contentKeys));
    if (hotErr === undefined) return this.queue.enqueueKept(tenant, contentKeys);
    await this.durable.markKept(tenant, contentKeys).catch(() => Promise.reject(hotFailure(hotErr)));
    this.debt.keptDurably(tenant, contentKeys);
  }

  /**
   * The hot store decides atomically; the durable copy follows behind. When the hot store has no
   * record (a flush or restart lost it), the durable one answers, so the next turn is not mistaken
   * for a session's first (which would let new decisions land inside the cached prefix).
   */
  async advanceTurn(tenant: string, session: string, turn: TurnRecord): Promise<TurnRecord | null> {
    let prev: TurnRecord | null = null;
    const hotErr = await this.hotCall(tenant, session, async () => void (prev = await this.hot.advanceTurn(tenant, session, turn)));
    if (hotErr !== undefined) return this.advanceDurably(tenant, session, turn, hotErr);
    this.rememberTurn(tenant, session, turn);
    const pending = this.queue.pendingTurn(tenant, session);
    this.queue.enqueueTurn(tenant, session, turn);
    if (prev) return prev;
    if (pending?.turn) return { ...pending.turn, rewritten: pending.rewritten ?? [] };
    try {
      return await this.durable.loadTurn(tenant, session);
    } catch (err) {
      this.log.warn('durable turn lookup failed; treating the turn as the first', { err: errorText(err) });
      return null;
    }
  }

  /** The hot record, else a queued or archived one (a hot loss keeps the session's names). */
  async hasTurn(tenant: string, session: string): Promise<boolean> {
    try {
      if (!this.debt.away && (await this.hot.hasTurn?.(tenant, session))) return true;
    } catch (err) {
      this.debt.fail(err);
    }
    if (this.queue.pendingTurn(tenant, session)?.turn) return true;
    try {
      return (await this.durable.loadTurn(tenant, session)) !== null;
    } catch (err) {
      // Postgres away: the turn is served (as new under this name) rather than failed open, as
      // every other read of a session the hot store lacks is while the database does not answer.
      this.log.warn('durable turn look-up failed; the session reads as new under this name', { err: errorText(err) });
      return false;
    }
  }

  async recordRewrites(tenant: string, session: string, rewritten: readonly number[]): Promise<void> {
    const hotErr = await this.hotCall(tenant, session, () => this.hot.recordRewrites(tenant, session, rewritten));
    if (hotErr === undefined) return this.rewritesBehind(tenant, session, rewritten);
    const turn = this.turnAt.get(`${tenant}\u0000${session}`);
    if (turn === undefined) throw hotFailure(hotErr);
    // Owed before the durable write is awaited: a repayment in flight then sees the session changed.
    this.debt.rewrote(tenant, session, { ...turn, rewritten: [...rewritten] });
    await this.durable.saveTurns([{ tenant, session, rewritten, at: turn.at }]).catch(() => Promise.reject(hotFailure(hotErr)));
  }

  /**
   * The hot store's advanceTurn on the durable copy. The previous turn is the newest of what this
   * process recorded durably alone, what is still queued and the stored row. With both stores away
   * the turn (forwarded as the client sent it, so rewriting nothing) is kept to be recorded once
   * they answer: the next turn then keeps what the provider cached of it.
   */
  private async advanceDurably(tenant: string, session: string, turn: TurnRecord, hotErr: unknown): Promise<TurnRecord | null> {
    const owed = this.debt.turn(tenant, session);
    const pending = this.queue.pendingTurn(tenant, session);
    const queued = pending?.turn && { ...pending.turn, rewritten: pending.rewritten ?? [] };
    let stored: TurnRecord | null;
    try {
      stored = await this.durable.advanceTurn(tenant, session, turn);
    } catch {
      this.debt.wrote(tenant, session, turn);
      this.queue.enqueueTurn(tenant, session, { ...turn, rewritten: [] });
      throw hotFailure(hotErr);
    }
    this.rememberTurn(tenant, session, turn);
    this.debt.wrote(tenant, session, turn);
    return newest([owed, queued, stored]);
  }

  /**
   * Runs a hot call unless the session is to be served durably; resolves with the failure (the
   * hot store is then marked away) or undefined once the hot store answered.
   */
  private async hotCall(tenant: string, session: string | undefined, call: () => Promise<void>): Promise<unknown> {
    if (session === undefined ? this.debt.away : !(await this.debt.ready(tenant, session))) {
      return this.debt.lastFailure ?? new StorageError('store_unavailable', 'hot store away');
    }
    try {
      await call();
      return undefined;
    } catch (err) {
      this.debt.fail(err);
      return err ?? new StorageError('store_unavailable', 'hot store failed');
    }
  }

  /**
   * One hot round trip for the turn's writes, guarded by the keys the run could not ask for up
   * front. A session the run saw without any flag may be one whose hot state vanished: loadSession
   * would ask the checkpoint about those keys then, so it is asked first; when it knows anything
   * the turn goes the long way (load, repair, write), as it would have through loadSession.
   */
  async commitTurn(tenant: string, w: TurnWrites): Promise<SessionSnapshot | null> {
    // A turn already run on a refusal is written past the budget (it cannot run again).
    const fresh =
      w.seen.stashFull === true ? [] : w.stash.filter((e) => !this.archivedLately.has(`${tenant}\u0000${w.session}\u0000${e.id}`));
    // Originals alone fill the write-behind queue (Postgres away): none is dropped, new ones are refused.
    if (fresh.length > 0 && !this.queue.admitsStash(archivedAs(tenant, w.session, fresh))) {
      this.budget.refuse(tenant);
      return refusedSnapshot();
    }
    const { admission, release } = await this.budget.admit(tenant, w.session, fresh);
    if (admission === 'refused') return refusedSnapshot();
    // Archived by the check: the write behind leaves them out.
    if (admission === 'archived') for (const e of fresh) this.archivedLately.add(`${tenant}\u0000${w.session}\u0000${e.id}`);
    try {
      return await this.commitAdmitted(tenant, w);
    } finally {
      release();
    }
  }

  private async commitAdmitted(tenant: string, w: TurnWrites): Promise<SessionSnapshot | null> {
    const hotReady = (await this.debt.ready(tenant, w.session)) && (await this.debt.ready(tenant, w.conversation));
    if (!this.hot.commitTurn || !hotReady) return commitTurnInParts(this, tenant, w);
    const unflagged = w.unknown.length > 0 && !w.seen.offloaded && w.seen.arm === undefined;
    if (unflagged && (await checkpointKnows(this, tenant, w.session, w.unknown))) return commitTurnInParts(this, tenant, w);
    let known: SessionSnapshot | null;
    try {
      known = await this.hot.commitTurn(tenant, w);
    } catch (err) {
      // Hot store away: each write falls back to the durable store as it does on its own.
      this.debt.fail(err);
      return commitTurnInParts(this, tenant, w);
    }
    // The hot store knew something about those keys and wrote nothing: complete it for the re-run.
    if (known) return this.completed(tenant, w.session, w.unknown, known);
    if (w.stash.length > 0) this.stashBehind(tenant, w.session, w.stash);
    if (w.writes) this.queue.enqueueCheckpoint(tenant, w.session, w.writes.frozen, w.writes.offloaded, w.writes.arm);
    if (w.rewritten) this.rewritesBehind(tenant, w.conversation, w.rewritten);
    return null;
  }

  private rewritesBehind(tenant: string, session: string, rewritten: readonly number[]): void {
    const turn = this.turnAt.get(`${tenant}\u0000${session}`);
    if (turn !== undefined) this.queue.enqueueRewrites(tenant, session, rewritten, turn.at);
  }

  /** When this replica last advanced each conversation, so its rewrites land on that turn's row. */
  private rememberTurn(tenant: string, session: string, turn: TurnRecord): void {
    const key = `${tenant}\u0000${session}`;
    this.turnAt.delete(key);
    this.turnAt.set(key, turn);
    if (this.turnAt.size > 10_000) deleteOldest(this.turnAt);
  }

  /**
   * Erasure: what is queued is written first (so no pending write lands after the purge), then
   * the hot store and the archive are purged.
   */
  async eraseTenant(tenant: string): Promise<void> {
    await this.queue.flush();
    await Promise.all([this.hot.eraseTenant?.(tenant), eraseTenant(this.durable, tenant)]);
    for (const key of [...this.turnAt.keys()]) if (key.startsWith(`${tenant}\u0000`)) this.turnAt.delete(key);
  }

  async eraseSession(tenant: string, session: string): Promise<void> {
    await this.queue.flush();
    await Promise.all([this.hot.eraseSession?.(tenant, session), eraseSession(this.durable, tenant, session)]);
  }

  health(): StoreHealth {
    const h = this.hot.health();
    return {
      frozenDropped: h.frozenDropped + this.restored,
      frozenRepaired: h.frozenRepaired + this.restored,
      ...((h.stashRefused || this.budget.refused.size > 0 || this.budget.maxBytes > 0) && {
        stashRefused: addCounts(h.stashRefused, this.budget.refused),
      }),
    };
  }

  queueStats(): WriteBehindStats {
    return this.queue.stats();
  }

  /** Writes everything queued to the durable store now (tests, shutdown). */
  flush(): Promise<void> {
    return this.queue.flush();
  }

  async ping(): Promise<void> {
    await Promise.all([this.hot.ping(), this.durable.ping()]);
  }

  /** Flushes the queue and closes the hot store; the durable store belongs to its creator. */
  async close(): Promise<void> {
    this.debt.close();
    await this.queue.close();
    await this.hot.close();
  }

  private async fromArchive(tenant: string, id: string, hotErr: unknown): Promise<string | null> {
    try {
      return await this.durable.getArchivedStash(tenant, id);
    } catch (err) {
      if (hotErr !== undefined) throw hotErr;
      throw err;
    }
  }
}
