// Where each session's billed cost per config version is summed. With a durable store every replica
// adds its deltas to holdout_sessions (one statement per flush, a second or so behind), so the
// figures aggregate across replicas and survive restarts and Redis flushes; without one
// (DURABLE_STORE=none) the process keeps them in memory under the same bounds. Neither ever fails
// or slows a request: recording is a map update, the database write happens behind.
import { deleteOldest } from '@context-guru/components';
import {
  HOLDOUT_BOUNDS,
  holdoutSessionsRepository,
  type HoldoutBounds,
  type HoldoutSessionCost,
  type SqlClient,
} from '@context-guru/storage';
import { errorText, type Logger } from '@context-guru/engine';

export interface HoldoutLedger {
  /** Adds one billed turn (or any delta) to its session's row. */
  add(c: HoldoutSessionCost): void;
  /** The tenant's sessions, on one version or all; what this replica still holds back is included. */
  list(tenant: string, version?: number): Promise<HoldoutSessionCost[]>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

const keyOf = (c: Pick<HoldoutSessionCost, 'tenant' | 'version' | 'session'>) => `${c.tenant}\u0000${c.version}\u0000${c.session}`;

function merge(into: Map<string, HoldoutSessionCost>, c: HoldoutSessionCost): void {
  const k = keyOf(c);
  const had = into.get(k);
  if (!had) into.set(k, { ...c });
  else {
    had.billedUsd += c.billedUsd;
    had.inputTokens += c.inputTokens;
    had.turns += c.turns;
  }
}

/** One process's figures: the most recently updated sessions of each version, the newest versions. */
export class MemoryHoldoutLedger implements HoldoutLedger {
  /** tenant → version → session → summed cost; insertion order is recency order. */
  private readonly tenants = new Map<string, Map<number, Map<string, HoldoutSessionCost>>>();

  constructor(private readonly bounds: HoldoutBounds = HOLDOUT_BOUNDS) {}

  add(c: HoldoutSessionCost): void {
    let versions = this.tenants.get(c.tenant);
    if (!versions) this.tenants.set(c.tenant, (versions = new Map()));
    let sessions = versions.get(c.version);
    if (!sessions) {
      versions.set(c.version, (sessions = new Map()));
      const oldest = [...versions.keys()].sort((a, b) => a - b);
      for (const v of oldest.slice(0, Math.max(0, oldest.length - this.bounds.versions))) versions.delete(v);
    }
    const had = sessions.get(c.session);
    sessions.delete(c.session);
    sessions.set(
      c.session,
      had
        ? { ...had, billedUsd: had.billedUsd + c.billedUsd, inputTokens: had.inputTokens + c.inputTokens, turns: had.turns + c.turns }
        : { ...c },
    );
    if (sessions.size > this.bounds.sessions) deleteOldest(sessions);
  }

  async list(tenant: string, version?: number): Promise<HoldoutSessionCost[]> {
    const out: HoldoutSessionCost[] = [];
    for (const [v, sessions] of this.tenants.get(tenant) ?? [])
      if (version === undefined || v === version) out.push(...[...sessions.values()].map((c) => ({ ...c })));
    return out;
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {
    this.tenants.clear();
  }
}

export interface SqlHoldoutLedgerOptions {
  /** Delay between the first held-back delta and its write (default 1 s). */
  flushMs?: number;
  /** How often the bounds are enforced (default 30 s). */
  trimEveryMs?: number;
  /** Sessions held back while the database is away (default 20 000); past it new deltas are dropped. */
  maxPending?: number;
  bounds?: HoldoutBounds;
  log?: Logger;
  now?: () => number;
}

/** Deltas held back per session and added to holdout_sessions in one statement per flush. */
export class SqlHoldoutLedger implements HoldoutLedger {
  private pending = new Map<string, HoldoutSessionCost>();
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private lastTrim = 0;
  private closed = false;
  private failing = false;
  /** Deltas dropped because the database stayed away past maxPending. */
  dropped = 0;
  private readonly o: Required<Omit<SqlHoldoutLedgerOptions, 'log'>> & { log?: Logger };

  constructor(
    private readonly sql: SqlClient,
    o: SqlHoldoutLedgerOptions = {},
  ) {
    this.o = { flushMs: 1000, trimEveryMs: 30_000, maxPending: 20_000, bounds: HOLDOUT_BOUNDS, now: Date.now, ...o };
    this.lastTrim = this.o.now();
  }

  add(c: HoldoutSessionCost): void {
    if (this.pending.size >= this.o.maxPending && !this.pending.has(keyOf(c))) {
      this.dropped++;
      return;
    }
    merge(this.pending, c);
    this.schedule();
  }

  async list(tenant: string, version?: number): Promise<HoldoutSessionCost[]> {
    await this.flush();
    const rows = await holdoutSessionsRepository.list(this.sql, tenant, version);
    // A failed flush left deltas behind: they still count here.
    if (this.pending.size === 0) return rows;
    const all = new Map(rows.map((r) => [keyOf(r), r]));
    for (const c of this.pending.values()) if (c.tenant === tenant && (version === undefined || c.version === version)) merge(all, c);
    return [...all.values()];
  }

  /** Writes what is held back; resolves when written or when the attempt failed (kept for the next). */
  flush(): Promise<void> {
    if (this.inFlight) return this.inFlight.then(() => (this.pending.size ? this.flush() : undefined));
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return Promise.resolve();
    this.inFlight = this.flushOnce().finally(() => {
      this.inFlight = undefined;
      if (this.pending.size) this.schedule();
    });
    return this.inFlight;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size) this.o.log?.warn('holdout figures lost at close', { sessions: this.pending.size });
  }

  private schedule(): void {
    if (this.timer || this.inFlight || this.closed) return;
    this.timer = setTimeout(() => void this.flush(), this.o.flushMs);
    this.timer.unref();
  }

  private async flushOnce(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    try {
      await holdoutSessionsRepository.add(this.sql, [...batch.values()]);
    } catch (err) {
      if (!this.failing) this.o.log?.warn('holdout figures not written; will retry', { error: errorText(err), sessions: batch.size });
      this.failing = true;
      for (const c of this.pending.values()) merge(batch, c);
      this.pending = batch;
      return;
    }
    if (this.failing) this.o.log?.info('holdout figures written again', { sessions: batch.size });
    this.failing = false;
    if (this.o.now() - this.lastTrim < this.o.trimEveryMs) return;
    this.lastTrim = this.o.now();
    const tenants = [...new Set([...batch.values()].map((c) => c.tenant))];
    await holdoutSessionsRepository
      .trim(this.sql, tenants, this.o.bounds)
      .catch((err: unknown) => this.o.log?.warn('holdout trim failed', { error: errorText(err) }));
  }
}
