// What the tiered store owes the hot store after serving without it. While the hot store does not
// answer, every call goes to the durable store (the truth) and each session written there is
// remembered; once the hot store answers again, each is re-warmed whole from the checkpoint with
// its last turn, before the session is served hot again. A Redis back with its old state would
// otherwise answer with the turn and decisions it had before the outage: a stale cache boundary
// lets new decisions land on messages the provider cached meanwhile.
import { deleteOldest, type HotStore, type TurnRecord } from '@context-guru/components';
import type { Checkpoint } from './sql/durable.store';
import { errorText, type StorageLogger } from './storage-logger';

interface Owed {
  tenant: string;
  session: string;
  /** The last turn recorded durably alone, with its rewrites. */
  turn?: TurnRecord;
  /** Bumped on every durable-only write: a repayment overtaken by one is made again. */
  version: number;
}

/** Sessions remembered at most; past it the oldest is forgotten (it is then repaired on a hot miss only). */
const MAX_OWED = 100_000;
/** How often the hot store is tried again while it is away or owed. */
const RETRY_MS = 250;

export interface HotDebtDeps {
  hot: HotStore;
  /** Every slot, flag and arm of the session (writes still queued included), kept marks among `kept`. */
  checkpoint(tenant: string, session: string, kept: readonly string[]): Promise<Checkpoint>;
  log: StorageLogger;
}

export class HotDebt {
  /** The hot store failed and has not answered since: every call goes to the durable store. */
  away = false;
  /** What the hot store failed with last (what a call it is spared meanwhile answers). */
  lastFailure: unknown;
  private readonly owed = new Map<string, Owed>();
  private readonly kept = new Map<string, Set<string>>();
  /** Repayments in flight, by session: concurrent callers share one. */
  private readonly repayingOne = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private repaying: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly d: HotDebtDeps) {}

  /**
   * Whether the hot store may serve the session now: not while it is away; once it answers, a
   * session still owed is repaid first, here on the request path (a session served on and on
   * would otherwise overtake every repayment the timer starts).
   */
  async ready(tenant: string, session: string): Promise<boolean> {
    if (this.away) return false;
    const o = this.owed.get(key(tenant, session));
    if (!o) return true;
    try {
      await this.repayOne(o);
      return !this.owed.has(key(tenant, session));
    } catch (err) {
      this.fail(err);
      return false;
    }
  }

  /** A hot call failed: stop asking it until it answers again. */
  fail(err: unknown): void {
    if (!this.away) this.d.log.warn('hot store not answering; serving from the durable store', { err: errorText(err) });
    this.away = true;
    this.lastFailure = err;
    this.schedule();
  }

  /** The session was written to the durable store alone (`turn`: its new turn record). */
  wrote(tenant: string, session: string, turn?: TurnRecord): void {
    const k = key(tenant, session);
    const o = this.owed.get(k) ?? { tenant, session, version: 0 };
    o.version++;
    if (turn) o.turn = { ...turn, rewritten: turn.rewritten ?? [] };
    this.owed.delete(k);
    this.owed.set(k, o);
    if (this.owed.size > MAX_OWED) deleteOldest(this.owed);
    this.schedule();
  }

  /** The turn this session last recorded durably alone, if any. */
  turn(tenant: string, session: string): TurnRecord | undefined {
    return this.owed.get(key(tenant, session))?.turn;
  }

  /**
   * Rewrites recorded durably alone, with their turn: owed to hot with that turn. Also when the
   * session was repaid meanwhile (the repayment carried the turn without them) or the turn itself
   * was advanced hot (only its rewrites met the outage): otherwise the hot record would keep the
   * turn as rewriting nothing, and the next turn would put back what the provider cached rewritten.
   * A later turn already owed wins (these rewrites are of an older one).
   */
  rewrote(tenant: string, session: string, turn: TurnRecord): void {
    const owedTurn = this.owed.get(key(tenant, session))?.turn;
    if (owedTurn && owedTurn.at > turn.at) return;
    this.wrote(tenant, session, turn);
  }

  keptDurably(tenant: string, contentKeys: readonly string[]): void {
    let s = this.kept.get(tenant);
    if (!s) this.kept.set(tenant, (s = new Set()));
    for (const ck of contentKeys) s.add(ck);
    this.schedule();
  }

  /** Repays what can be repaid now (tests; the timer does it otherwise). */
  repay(): Promise<void> {
    this.repaying ??= this.repayAll().finally(() => (this.repaying = undefined));
    return this.repaying;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.repay().finally(() => {
        if (this.away || this.owed.size > 0 || this.kept.size > 0) this.schedule();
      });
    }, RETRY_MS);
    this.timer.unref();
  }

  private async repayAll(): Promise<void> {
    try {
      await this.d.hot.ping();
      for (const [tenant, cks] of [...this.kept]) {
        await this.d.hot.markKept(tenant, [...cks]);
        this.kept.delete(tenant);
      }
      // By key, read again at each step: an entry repaid meanwhile by its session's request is gone,
      // and repaying it again from an old copy would set the hot turn back.
      for (const k of [...this.owed.keys()]) {
        const o = this.owed.get(k);
        if (o) await this.repayOne(o);
      }
      if (this.away) this.d.log.info('hot store answering again; its copies repaired');
      this.away = false;
    } catch (err) {
      // Still away (or away again): the next attempt starts over; every step is idempotent.
      if (!this.away) this.d.log.warn('hot store repair deferred', { err: errorText(err) });
      this.away = true;
    }
  }

  /** Repays one session; it stays owed if it was written durably alone again meanwhile. */
  private repayOne(o: Owed): Promise<void> {
    const k = key(o.tenant, o.session);
    let p = this.repayingOne.get(k);
    if (!p) {
      const version = o.version;
      p = this.repaySession(o)
        .then(() => {
          if (this.owed.get(k)?.version === version) this.owed.delete(k);
        })
        .finally(() => this.repayingOne.delete(k));
      this.repayingOne.set(k, p);
    }
    return p;
  }

  private async repaySession(o: Owed): Promise<void> {
    const cp = await this.d.checkpoint(o.tenant, o.session, []);
    if (cp.frozen.size > 0 || cp.offloaded || cp.arm) {
      await this.d.hot.commitSession(o.tenant, o.session, { frozen: cp.frozen, offloaded: cp.offloaded, ...(cp.arm && { arm: cp.arm }) });
    }
    if (!o.turn) return;
    await this.d.hot.advanceTurn(o.tenant, o.session, o.turn);
    if (o.turn.rewritten?.length) await this.d.hot.recordRewrites(o.tenant, o.session, o.turn.rewritten);
  }
}

function key(tenant: string, session: string): string {
  return `${tenant}\u0000${session}`;
}
