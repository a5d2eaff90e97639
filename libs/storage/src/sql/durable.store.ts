// The durable half of session state (Postgres or PGlite): stash archive, ownership, frozen
// checkpoints, sticky flags and kept marks, all scoped by tenant and bounded by retention.
// Every write is a set-based statement over arrays, so a batch of any size is one round trip.
import type { Arm, TurnRecord } from '@context-guru/components';
import { loopFairDeadline } from '../loop-fair-deadline';
import type { KeyRing } from '../crypto/keyring';
import { stashAad } from '../crypto/sealed-value';
import { openedCheckpoint, sealedArchive, sealedSlots } from '../crypto/sealed-rows';
import { StorageError } from '../storage-errors';
import { LookupBatcher } from './lookup-batcher';
import { keptKey, presenceOf, sessionKey, surelyNew, type PresenceFilter } from './presence-filter';
import { loadCheckpoints, loadTurns, turnOf, type Checkpoint, type CheckpointAsk, type TurnAsk } from './session-lookups';
import { col, type SqlClient, type SqlQueryable } from './sql-client';
import { storableText } from './storable-text';
import { utcDay, writeCounted, type ArchiveRows } from './stash-bytes';
import { StashUsage } from './stash-usage';
import { purgeExpired, type PurgeResult } from './retention-purge';
import { maintainPartitions, retriedOnPartitionRace, type PartitionRound } from './partitions';

export type { PurgeResult } from './retention-purge';
import { RecentSet } from '../recent-set';
import type { ArchivedStash, TurnWrite } from './durable.types';
import { ADVANCE_TURN, writeTurns } from './turn-writes';

export { storableText } from './storable-text';
export type { Checkpoint } from './session-lookups';
export type { ArchivedStash, TurnWrite } from './durable.types';

export interface RetentionRound {
  /** Rows gone per table: with dropped partitions, or deleted in batches. */
  rows: PurgeResult;
  partitions: PartitionRound;
}

export interface CheckpointWrite {
  tenant: string;
  session: string;
  /** slot (`component:contentKey`) → replacement. */
  frozen: ReadonlyMap<string, string>;
  offloaded: boolean;
  /** The session's arm; the first one stored stays. */
  arm?: Arm;
}

export interface DurableStoreOptions {
  /** How long archived originals, checkpoints and marks are kept (default 30 days). */
  retentionDays?: number;
  /** Injectable clock (epoch ms); timestamps are written from it so tests need no sleeping. */
  now?: () => number;
  /**
   * How long a look-up on the request path may wait on Postgres before it rejects as
   * store_unavailable and the request fails open (default 5 s). A stalled network or server would
   * otherwise hold the request for as long as the socket lives. PGlite runs in-process: unbounded.
   */
  readTimeoutMs?: number;
  /** Seals archived originals and checkpointed replacements per tenant (absent: plaintext). */
  keys?: KeyRing;
}

const DAY_MS = 86_400_000;
const TEXT_ARCHIVED_MEMO_SIZE = 100_000;
/** Re-archive a text at least this often, as the tiered store re-archives a session's own copy. */
const TEXT_ARCHIVED_MEMO_MS = 6 * 3_600_000;
/** Look-up statements in flight at once on a Postgres pool (it has ten connections by default). */
const LOOKUPS_IN_FLIGHT_ON_A_POOL = 4;

export class DurableStore {
  readonly retentionMs: number;
  private readonly readTimeoutMs: number;
  /** Values skipped because Postgres text cannot hold them (NUL, lone surrogates). */
  skipped = 0;
  private readonly now: () => number;
  /** First-sight look-ups, coalesced (see LookupBatcher). */
  private readonly turns: LookupBatcher<TurnAsk, TurnRecord | null>;
  private readonly checkpoints: LookupBatcher<CheckpointAsk, Checkpoint>;
  /** What this store may hold, when its client is the database's only writer. */
  private readonly presence: PresenceFilter | undefined;
  /**
   * Originals whose text this store archived lately (tenant\0id): another session stashing the same
   * original adds only its ownership. An id names one text, and a row written within the window
   * cannot have been purged (the window is a quarter of retention at most); an erasure
   * (sql/erase.ts) clears it.
   */
  readonly textArchived: RecentSet;
  private readonly keys: KeyRing | undefined;
  /** The archive's byte counters, as the budget reads them. */
  readonly stashBytes: StashUsage;

  constructor(
    readonly sql: SqlClient,
    o: DurableStoreOptions = {},
  ) {
    this.retentionMs = (o.retentionDays ?? 30) * DAY_MS;
    this.now = o.now ?? Date.now;
    this.readTimeoutMs = o.readTimeoutMs ?? 5000;
    // PGlite has one session: a second statement in flight would only queue behind the first.
    const batching = { maxInFlight: sql.kind === 'pglite' ? 1 : LOOKUPS_IN_FLIGHT_ON_A_POOL };
    this.turns = new LookupBatcher((asks) => loadTurns(sql, asks), batching);
    this.checkpoints = new LookupBatcher((asks) => loadCheckpoints(sql, asks), batching);
    this.presence = presenceOf(sql);
    this.textArchived = new RecentSet(TEXT_ARCHIVED_MEMO_SIZE, Math.min(TEXT_ARCHIVED_MEMO_MS, this.retentionMs / 4), this.now);
    this.keys = o.keys;
    this.stashBytes = new StashUsage(sql, o.keys !== undefined, this.now, this.retentionMs, (p) => this.bounded(p));
  }

  get kind(): string {
    return this.sql.kind;
  }

  /** Archives originals and their ownership in one transaction; re-archiving extends retention. */
  async archiveStash(batch: readonly ArchivedStash[]): Promise<void> {
    await this.archive(batch, undefined);
  }

  /**
   * The budget check: archives one tenant's originals unless the bytes they add would take its
   * archive past `maxBytes` (then nothing is written and false comes back). A batch that adds
   * nothing (every original already archived) is never refused. The tenant's lock is held for the
   * transaction, so replicas checking the same tenant see each other's writes.
   */
  archiveWithin(tenant: string, batch: readonly ArchivedStash[], maxBytes: number): Promise<boolean> {
    return this.archive(batch, { tenant, maxBytes });
  }

  private async archive(batch: readonly ArchivedStash[], budget: { tenant: string; maxBytes: number } | undefined): Promise<boolean> {
    const textKey = (e: ArchivedStash) => `${e.tenant}\u0000${e.id}`;
    // A text archived lately was storable then, and an id names one text.
    const ok = batch.filter((e) => this.textArchived.has(textKey(e)) || storableText(e.text));
    this.skipped += batch.length - ok.length;
    if (ok.length === 0) return true;
    const now = this.now();
    const rows: ArchiveRows = {
      stash: await sealedArchive(
        this.keys,
        dedupe(ok, textKey).filter((e) => !this.textArchived.has(textKey(e))),
      ),
      own: dedupe(ok, (e) => `${e.tenant}\u0000${e.session}\u0000${e.id}`),
      now: new Date(now),
      expires: new Date(now + this.retentionMs),
      expiresDay: utcDay(now + this.retentionMs),
      day: utcDay(now),
      fromDay: utcDay(now - this.retentionMs),
    };
    const written = retriedOnPartitionRace(() => writeCounted(this.sql, rows, budget));
    // The budget check runs on the request path: bounded as a look-up is.
    const counted = await (budget ? this.bounded(written) : written);
    if (!counted) return false;
    this.stashBytes.record(counted, now);
    for (const e of rows.stash) this.textArchived.add(textKey(e));
    return true;
  }

  /** The archived original, or null once its retention has passed (any copy: an id names one text). */
  async getArchivedStash(tenant: string, id: string): Promise<string | null> {
    const rows = await this.lookup('SELECT text FROM stash_archive WHERE tenant = $1 AND id = $2 AND expires_at > $3 LIMIT 1', [
      tenant,
      id,
      new Date(this.now()),
    ]);
    if (!rows[0]) return null;
    const stored = col.str(rows[0], 'text');
    return this.keys ? this.keys.open(tenant, stored, stashAad(id)) : stored;
  }

  async owns(tenant: string, session: string, id: string): Promise<boolean> {
    const rows = await this.lookup('SELECT 1 AS hit FROM ownership WHERE tenant = $1 AND session = $2 AND id = $3 AND created_at > $4', [
      tenant,
      session,
      id,
      this.cutoff(),
    ]);
    return rows.length > 0;
  }

  /** Upserts frozen decisions (last write wins per slot) and sticky flags of many sessions at once. */
  async saveCheckpoints(batch: readonly CheckpointWrite[]): Promise<void> {
    for (const w of batch) this.presence?.add(sessionKey(w.tenant, w.session));
    const slots = new Map<string, [string, string, string, string]>();
    const flagged = new Map<string, [string, string, boolean, Arm | null]>();
    for (const w of batch) {
      for (const [slot, r] of w.frozen) {
        if (!storableText(r)) {
          this.skipped++;
          continue;
        }
        slots.set(`${w.tenant}\u0000${w.session}\u0000${slot}`, [w.tenant, w.session, slot, r]);
      }
      if (w.offloaded || w.arm) {
        const key = `${w.tenant}\u0000${w.session}`;
        const had = flagged.get(key);
        flagged.set(key, [w.tenant, w.session, w.offloaded || had?.[2] === true, had?.[3] ?? w.arm ?? null]);
      }
    }
    if (slots.size === 0 && flagged.size === 0) return;
    const rows = await sealedSlots(this.keys, [...slots.values()]);
    const flags = [...flagged.values()];
    const at = new Date(this.now());
    await this.write(async (c) => {
      if (rows.length > 0) {
        await c.query(
          // Last write wins within the day's partition; across days the newest day's row (session-lookups.ts).
          `INSERT INTO session_checkpoint (tenant, session, slot, replacement, updated_at, day)
           SELECT t, s, sl, r, $5, $6::date FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS b(t, s, sl, r)
           ON CONFLICT (tenant, session, slot, day) DO UPDATE
             SET replacement = EXCLUDED.replacement, updated_at = EXCLUDED.updated_at`,
          [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3]), at, utcDay(at.getTime())],
        );
      }
      if (flags.length > 0) {
        await c.query(
          `INSERT INTO session_state (tenant, session, offloaded, arm, updated_at)
           SELECT t, s, o, a, $5 FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[]) AS b(t, s, o, a)
           ON CONFLICT (tenant, session) DO UPDATE
             SET offloaded = session_state.offloaded OR EXCLUDED.offloaded,
                 arm = COALESCE(session_state.arm, EXCLUDED.arm), updated_at = EXCLUDED.updated_at`,
          [flags.map((f) => f[0]), flags.map((f) => f[1]), flags.map((f) => f[2]), flags.map((f) => f[3]), at],
        );
      }
    });
  }

  saveCheckpoint(tenant: string, session: string, frozen: ReadonlyMap<string, string>, offloaded = false, arm?: Arm): Promise<void> {
    return this.saveCheckpoints([{ tenant, session, frozen, offloaded, arm }]);
  }

  /**
   * A session's checkpoint: frozen slots (only those of `contentKeys` when given), the sticky
   * offloaded flag and arm, and the kept marks among `contentKeys`. Look-ups asked together (a
   * burst of new sessions) share one statement.
   */
  loadCheckpoint(tenant: string, session: string, contentKeys?: readonly string[], everySlot = false): Promise<Checkpoint> {
    let keys = contentKeys;
    const p = this.presence;
    if (p && surelyNew(p, this.sql, tenant, session)) {
      // No slot or flag of this session exists: only kept marks may, and only among these keys.
      keys = contentKeys?.filter((ck) => p.mayHold(keptKey(tenant, ck))) ?? [];
      if (keys.length === 0) return Promise.resolve({ frozen: new Map(), offloaded: false, kept: new Set() });
    }
    const loaded = this.bounded(
      this.checkpoints.load({ tenant, session, cutoff: this.cutoff(), everySlot, ...(keys ? { contentKeys: keys } : {}) }),
    );
    const ring = this.keys;
    return ring ? loaded.then((cp) => openedCheckpoint(ring, tenant, session, cp)) : loaded;
  }

  /**
   * Upserts turn records; a write with `turn` replaces the row (rewrites reset to what it carries),
   * one with only `rewritten` updates the rewrites of the row already there.
   */
  async saveTurns(batch: readonly TurnWrite[]): Promise<void> {
    for (const w of batch) this.presence?.add(sessionKey(w.tenant, w.session));
    const full = batch.filter((w): w is TurnWrite & { turn: TurnRecord } => w.turn !== undefined);
    const partial = batch.filter(
      (w): w is TurnWrite & { rewritten: readonly number[]; at: number } => !w.turn && w.rewritten !== undefined && w.at !== undefined,
    );
    if (full.length === 0 && partial.length === 0) return;
    const at = new Date(this.now());
    await this.write((c) => writeTurns(c, full, partial, at));
  }

  /**
   * The hot store's advanceTurn, for when it does not answer: records `turn` (rewrites reset) and
   * returns the row it replaced, in one statement. The newest row is locked, so of concurrent
   * advances each sees a distinct predecessor; only two first turns at once may both see none (and,
   * across midnight UTC, two advances whose predecessor is the previous day's row).
   */
  async advanceTurn(tenant: string, session: string, turn: TurnRecord): Promise<TurnRecord | null> {
    this.presence?.add(sessionKey(tenant, session));
    const now = this.now();
    const rows = await retriedOnPartitionRace(() =>
      this.lookup(ADVANCE_TURN, [
        tenant,
        session,
        Math.round(turn.n),
        Math.round(turn.at),
        Math.round(turn.ttlMs),
        this.cutoff(),
        new Date(now),
        utcDay(now),
      ]),
    );
    return rows[0] ? turnOf(rows[0]) : null;
  }

  /** A conversation's last turn record; look-ups asked together share one statement. */
  loadTurn(tenant: string, session: string): Promise<TurnRecord | null> {
    if (this.presence && surelyNew(this.presence, this.sql, tenant, session)) return Promise.resolve(null);
    return this.bounded(this.turns.load({ tenant, session, cutoff: this.cutoff() }));
  }

  async markKept(tenant: string, contentKeys: readonly string[]): Promise<void> {
    const keys = [...new Set(contentKeys)];
    for (const ck of keys) this.presence?.add(keptKey(tenant, ck));
    if (keys.length === 0) return;
    await this.lookup(
      `INSERT INTO kept (tenant, content_key, created_at) SELECT $1, k, $3 FROM unnest($2::text[]) AS b(k)
       ON CONFLICT (tenant, content_key) DO UPDATE SET created_at = EXCLUDED.created_at`,
      [tenant, keys, new Date(this.now())],
    );
  }

  async keptAmong(tenant: string, contentKeys: readonly string[]): Promise<Set<string>> {
    if (contentKeys.length === 0) return new Set();
    const rows = await this.lookup('SELECT content_key FROM kept WHERE tenant = $1 AND content_key = ANY($2::text[]) AND created_at > $3', [
      tenant,
      [...contentKeys],
      this.cutoff(),
    ]);
    return new Set(rows.map((r) => col.str(r, 'content_key')));
  }

  /**
   * One retention round (createStores schedules it): partition maintenance (drops what is past
   * retention, creates what is ahead), then the batched purge of the other tables. Undefined
   * when another replica holds either (it does the work).
   */
  async retentionRound(batch?: number): Promise<RetentionRound | undefined> {
    const partitions = await maintainPartitions(this.sql, this.now(), this.retentionMs);
    if (!partitions) return undefined;
    const purged = await purgeExpired(this.sql, new Date(this.now()), this.cutoff(), batch);
    if (!purged) return undefined;
    this.stashBytes.forget();
    const rows = { ...purged };
    for (const k of Object.keys(rows) as Array<keyof PurgeResult>) rows[k] += partitions.rows[k];
    return { rows, partitions };
  }

  /** The rows a retention round removed, per table; undefined when another replica holds it. */
  async purgeExpired(batch?: number): Promise<PurgeResult | undefined> {
    return (await this.retentionRound(batch))?.rows;
  }

  async ping(): Promise<void> {
    await this.lookup('SELECT 1');
  }

  /** A write transaction into the partitioned tables (retried once if it met a partition being made). */
  private write(fn: (c: SqlQueryable) => Promise<void>): Promise<void> {
    return retriedOnPartitionRace(() => this.sql.transaction(fn));
  }

  /** A single statement on the request path (bounded on Postgres: see readTimeoutMs). */
  private lookup(text: string, params?: readonly unknown[]): ReturnType<SqlClient['query']> {
    return this.bounded(this.sql.query(text, params));
  }

  private bounded<T>(p: Promise<T>): Promise<T> {
    if (this.sql.kind !== 'postgres') return p;
    const ms = this.readTimeoutMs;
    return loopFairDeadline(p, ms, () => new StorageError('store_unavailable', `postgres did not answer within ${ms} ms`));
  }

  close(): Promise<void> {
    return this.sql.close();
  }

  private cutoff(): Date {
    return new Date(this.now() - this.retentionMs);
  }
}

/** Last occurrence wins, first-seen order kept (ON CONFLICT cannot touch one row twice). */
function dedupe<T>(items: readonly T[], key: (t: T) => string): T[] {
  const m = new Map<string, T>();
  for (const it of items) m.set(key(it), it);
  return [...m.values()];
}
