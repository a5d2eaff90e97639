// The shared hot store: any number of gateway replicas see one state. Every method is one round
// trip (a pipeline, MULTI or script) and rejects promptly while Redis is down so the gateway can
// fail open; the client reconnects by itself when Redis returns.
import type { HotStore, SessionSnapshot, SessionWrites, StashEntry, StoreHealth, TurnRecord, TurnWrites } from '@context-guru/components';
import { ReplyError, type Redis } from 'ioredis';
import { StorageError } from '../storage-errors';
import { errorText, silentLogger, type StorageLogger } from '../storage-logger';
import { loopFairDeadline } from '../loop-fair-deadline';
import type { DataKeyStore } from '../crypto/data-keys';
import type { KeyRing } from '../crypto/keyring';
import { frozenAad, sealEntries, stashAad } from '../crypto/sealed-value';
import { openRedis, scanKeys, type RedisClient, type RedisConnectOptions, type RedisEndpoint } from './redis-connection';
import { RedisDataKeyStore } from './redis-data-keys';
import { StashBudget } from './redis-stash-budget';
import { parseTurn, unavailable, unavailableReply, waitReady } from './redis-replies';
import { defineScripts } from './redis-scripts';

export interface RedisHotStoreOptions {
  /** REDIS_URL, or a Redis Cluster or Sentinel target (redis-connection.ts). */
  url: RedisEndpoint;
  /** Prefix of every key (default `cg:`); tests use a unique one per run. */
  prefix?: string;
  /** Sliding TTL of every entry (default 10 000 s). */
  ttlSeconds?: number;
  /** Stash entries per tenant (default 10 000), trimmed least-recently-used first on write. */
  maxEntries?: number;
  /** Bytes of stored originals per tenant (0 or unset: unbounded); past it a turn's new originals are refused. */
  maxBytes?: number;
  /** The frozen index outlives the values by this factor so a lost value is detected (default 4). */
  indexTtlFactor?: number;
  connectTimeoutMs?: number;
  /** How long a command may go unanswered, counted fairly to a busy event loop (default 1 s). */
  commandTimeoutMs?: number;
  /** How long connect() waits for the first ready connection (default 10 s). */
  readyTimeoutMs?: number;
  log?: StorageLogger;
  /** Clock for LRU recency scores (default Date.now); TTLs are Redis's own clock. */
  now?: () => number;
  /** Seals originals and frozen replacements per tenant (absent: stored as plaintext). */
  keys?: KeyRing;
}

interface Scripts {
  cgAdvanceTurn(key: string, rwKey: string, n: number, at: number, ttlMs: number, ex: number): Promise<[string, string] | null>;
  cgGetStash(stashKey: string, lruKey: string, ttl: number, now: number, id: string): Promise<string | null>;
  cgLoadSession(numKeys: number, ...args: (string | number)[]): Promise<LoadReply>;
  cgWriteTurn(numKeys: number, ...args: (string | number)[]): Promise<[1, number] | [0, LoadReply] | [2, number]>;
}
/** frozen flat [slot, replacement, …], lost slots, kept content keys, offloaded 0|1, newly lost, arm. */
type LoadReply = [string[], string[], string[], number, number, string | null];
/** What one write script call carries (a turn's, or one method's part of it). */
type WriteParts = Omit<TurnWrites, 'seen'> & Partial<Pick<TurnWrites, 'seen'>>;
type ScriptedRedis = RedisClient & Scripts;

export class RedisHotStore implements HotStore {
  readonly kind = 'redis';
  readonly persistent = true;
  /**
   * Network round trips so far (a measurement aid): commands issued in the same synchronous burst
   * (e.g. under one Promise.all) are all on the wire before any reply is awaited, so they count once.
   */
  roundTrips = 0;
  private inBurst = false;
  private readonly ttl: number;
  private readonly indexTtl: number;
  private readonly maxEntries: number;
  private readonly budget: StashBudget;
  private readonly prefix: string;
  private readonly now: () => number;
  private readonly commandTimeoutMs: number;
  private readonly keys: KeyRing | undefined;
  /** The error of a command unanswered past its deadline (one closure per store, not per command). */
  private readonly late = () => unavailable(new Error(`no reply within ${this.commandTimeoutMs} ms`));
  private dropped = 0;
  private repaired = 0;

  private constructor(
    private readonly redis: ScriptedRedis,
    o: RedisHotStoreOptions,
  ) {
    this.ttl = o.ttlSeconds ?? 10_000;
    this.indexTtl = this.ttl * (o.indexTtlFactor ?? 4);
    this.maxEntries = o.maxEntries ?? 10_000;
    this.budget = new StashBudget(o.maxBytes ?? 0);
    this.prefix = o.prefix ?? 'cg:';
    this.now = o.now ?? Date.now;
    this.commandTimeoutMs = o.commandTimeoutMs ?? 1000;
    this.keys = o.keys;
  }

  /** Connects and waits until Redis answers; throws after readyTimeoutMs (boot fails loudly). */
  static async connect(o: RedisHotStoreOptions): Promise<RedisHotStore> {
    const log = o.log ?? silentLogger;
    const opts: RedisConnectOptions = {
      lazyConnect: true,
      // Fail fast instead of queueing: a request must never wait on a Redis that is away.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: o.connectTimeoutMs ?? 1000,
      // No ioredis commandTimeout: its timer would fire before a busy loop reads the reply
      // (loop-fair-deadline.ts); every command goes through answered() instead.
      // ioredis keeps a timer this long even for a socket that never connected; keep it short.
      disconnectTimeout: 300,
      // Reconnect forever with a capped backoff: recovery needs no restart.
      retryStrategy: (times) => Math.min(100 * times, 2000),
    };
    const redis = openRedis(o.url, opts) as ScriptedRedis;
    defineScripts(redis);
    let down = false;
    redis.on('error', (err: unknown) => {
      if (!down) log.warn('redis unavailable', { err: errorText(err) });
      down = true;
    });
    redis.on('ready', () => {
      if (down) log.info('redis recovered');
      down = false;
    });
    await waitReady(redis, o.readyTimeoutMs ?? 10_000);
    return new RedisHotStore(redis, o);
  }

  async putStash(tenant: string, session: string, entries: readonly StashEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.write(tenant, { session, conversation: session, stash: entries, unknown: [] });
  }

  async getStash(tenant: string, id: string): Promise<string | null> {
    const t = this.tenantPrefix(tenant);
    this.trip();
    const stored = await this.answered(this.redis.cgGetStash(`${t}s:${id}`, `${t}lru`, this.ttl, this.now(), id));
    return stored === null || !this.keys ? stored : this.keys.open(tenant, stored, stashAad(id));
  }

  async owns(tenant: string, session: string, id: string): Promise<boolean> {
    this.trip();
    return (await this.answered(this.redis.sismember(`${this.tenantPrefix(tenant)}own:${session}`, id))) === 1;
  }

  async loadSession(tenant: string, session: string, contentKeys: readonly string[]): Promise<SessionSnapshot> {
    const t = this.tenantPrefix(tenant);
    const cks = [...new Set(contentKeys)];
    const keys = [...this.sessionKeys(t, session), ...cks.map((ck) => `${t}kept:${ck}`)];
    this.trip();
    const reply = await this.answered(this.redis.cgLoadSession(keys.length, ...keys, this.ttl, this.indexTtl, ...cks));
    return this.snapshotOf(tenant, session, reply);
  }

  async commitSession(tenant: string, session: string, writes: SessionWrites): Promise<void> {
    if (writes.frozen.size === 0 && !writes.offloaded && !writes.arm) return;
    await this.write(tenant, { session, conversation: session, stash: [], writes, unknown: [] });
  }

  /**
   * The stash, the session's decisions and the rewrites in one script: atomic, one round trip,
   * and guarded — when the session holds anything about `w.unknown`, nothing is written.
   */
  commitTurn(tenant: string, w: TurnWrites): Promise<SessionSnapshot | null> {
    return this.write(tenant, w);
  }

  async markKept(tenant: string, contentKeys: readonly string[]): Promise<void> {
    if (contentKeys.length === 0) return;
    const t = this.tenantPrefix(tenant);
    const p = this.redis.pipeline();
    for (const ck of new Set(contentKeys)) p.set(`${t}kept:${ck}`, '1', 'EX', this.ttl);
    await this.exec(p);
  }

  async advanceTurn(tenant: string, session: string, turn: TurnRecord): Promise<TurnRecord | null> {
    this.trip();
    const prev = await this.answered(
      this.redis.cgAdvanceTurn(
        `${this.tenantPrefix(tenant)}turn:${session}`,
        `${this.tenantPrefix(tenant)}turnrw:${session}`,
        Math.max(0, Math.round(turn.n)),
        Math.max(0, Math.round(turn.at)),
        Math.max(0, Math.round(turn.ttlMs)),
        this.ttl,
      ),
    );
    if (!Array.isArray(prev)) return null;
    const rec = parseTurn(String(prev[0]));
    if (rec && typeof prev[1] === 'string') rec.rewritten = prev[1] ? prev[1].split(',').map(Number) : [];
    return rec;
  }

  async hasTurn(tenant: string, session: string): Promise<boolean> {
    this.trip();
    return (await this.answered(this.redis.exists(`${this.tenantPrefix(tenant)}turn:${session}`))) === 1;
  }

  async recordRewrites(tenant: string, session: string, rewritten: readonly number[]): Promise<void> {
    await this.write(tenant, { session, conversation: session, stash: [], rewritten, unknown: [] });
  }

  /** Warms a stash entry without an ownership record (the tiered store's archive fallback). */
  async warmStash(tenant: string, entries: readonly StashEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const t = this.tenantPrefix(tenant);
    const now = this.now();
    const k = this.keys && (await this.keys.tenantKeys(tenant));
    const sealed = k ? sealEntries(k, entries) : entries;
    const p = this.redis.pipeline();
    for (const e of sealed) p.set(`${t}s:${e.id}`, e.text, 'EX', this.ttl);
    p.zadd(`${t}lru`, ...entries.flatMap((e) => [now, e.id]));
    p.expire(`${t}lru`, this.ttl);
    await this.exec(p);
  }

  async eraseTenant(tenant: string): Promise<void> {
    // Every key of the tenant shares its hash-tagged prefix (no glob character can occur in it).
    await this.unlinkMatching(`${this.tenantPrefix(tenant)}*`);
  }

  async eraseSession(tenant: string, session: string): Promise<void> {
    const t = this.tenantPrefix(tenant);
    const ids = await this.answered(this.redis.smembers(`${t}own:${session}`));
    const sizes = ids.length ? await this.answered(this.redis.hmget(`${t}stashsz`, ...ids)) : [];
    const p = this.redis.pipeline();
    for (const id of ids) p.unlink(`${t}s:${id}`);
    if (ids.length) p.zrem(`${t}lru`, ...ids);
    this.budget.release(p, t, ids, sizes);
    p.unlink(...this.sessionKeys(t, session), `${t}own:${session}`, `${t}turn:${session}`, `${t}turnrw:${session}`);
    await this.exec(p);
    // Turn records of the session's conversations: `${session}#${alias}`.
    for (const k of ['turn', 'turnrw']) await this.unlinkMatching(`${t}${k}:${session}#*`);
  }

  private async unlinkMatching(pattern: string): Promise<void> {
    // The keys matched share the tenant's hash tag, so one UNLINK never spans cluster slots.
    await scanKeys(
      this.redis,
      pattern,
      async (keys) => void (await this.answered(this.redis.unlink(...keys))),
      (p) => this.answered(p),
    );
  }

  health(): StoreHealth {
    return { frozenDropped: this.dropped, frozenRepaired: this.repaired, stashRefused: this.budget.refused };
  }

  async ping(): Promise<void> {
    this.trip();
    await this.answered(this.redis.ping());
  }

  /** Idempotent: QUIT when connected, otherwise stop reconnecting. */
  async close(): Promise<void> {
    if (this.redis.status === 'end') return;
    if (this.redis.status !== 'ready') {
      this.redis.disconnect();
      return;
    }
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }

  private async write(tenant: string, w: WriteParts): Promise<SessionSnapshot | null> {
    const t = this.tenantPrefix(tenant);
    const cks = [...new Set(w.unknown)];
    const keys = [
      ...this.sessionKeys(t, w.session),
      `${t}lru`,
      `${t}own:${w.session}`,
      `${t}turnrw:${w.conversation}`,
      ...this.budget.keys(t),
      ...cks.map((ck) => `${t}kept:${ck}`),
    ];
    // Awaited only on a tenant's first write in this process: a cached key adds no microtask.
    const loading = this.keys?.tenantKeys(tenant);
    const k = loading instanceof Promise ? await loading : loading;
    const frozen = w.writes ? [...w.writes.frozen].flatMap(([slot, r]) => [slot, k ? k.seal(r, frozenAad(w.session, slot)) : r]) : [];
    const stash = k ? sealEntries(k, w.stash) : w.stash;
    this.trip();
    const res = await this.answered(
      this.redis.cgWriteTurn(
        keys.length,
        ...keys,
        this.ttl,
        this.indexTtl,
        this.maxEntries,
        `${t}s:`,
        this.now(),
        w.writes?.offloaded ? '1' : '0',
        w.writes?.arm ?? '',
        w.rewritten ? w.rewritten.join(',') : '-',
        this.budget.maxBytes,
        // Only a turn's guarded write can be refused (it runs again); a turn already run on a refusal
        // stashes only what its replays name, and a lone putStash cannot run again: written regardless.
        w.seen === undefined || w.seen.stashFull === true ? '1' : '0',
        cks.length,
        ...cks,
        stash.length,
        ...stash.flatMap((e) => [e.id, e.text]),
        frozen.length / 2,
        ...frozen,
      ),
    );
    if (res[0] === 0) return this.snapshotOf(tenant, w.session, res[1]);
    if (res[0] === 2) return this.budget.refuse(tenant);
    this.repaired += Number(res[1]);
    return null;
  }

  /** Frozen hash, frozen index, lost set, offloaded flag, arm: the order the scripts read them in. */
  private sessionKeys(t: string, session: string): string[] {
    return [`${t}frz:${session}`, `${t}fidx:${session}`, `${t}flost:${session}`, `${t}off:${session}`, `${t}arm:${session}`];
  }

  /** Where the data keys live when there is no database (createStores decides). */
  dataKeyStore(): DataKeyStore {
    return new RedisDataKeyStore(this.redis, this.prefix, (p) => this.answered(p));
  }

  private async snapshotOf(tenant: string, session: string, [flat, lost, kept, off, newly, arm]: LoadReply): Promise<SessionSnapshot> {
    this.dropped += newly;
    const frozen = new Map<string, string>();
    const k =
      this.keys && flat.length > 0
        ? await this.keys.opener(
            tenant,
            flat.filter((_, i) => i % 2 === 1),
          )
        : undefined;
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const [slot, v] = [flat[i], flat[i + 1]];
      if (slot === undefined || v === undefined) continue; // i + 1 < length: always both
      const plain = k ? k.open(v, frozenAad(session, slot)) : v;
      if (plain !== undefined) frozen.set(slot, plain);
    }
    const snap: SessionSnapshot = { frozen, lost: new Set(lost), kept: new Set(kept), offloaded: off === 1 };
    if (arm === 'treated' || arm === 'holdout') snap.arm = arm;
    return snap;
  }

  private trip(): void {
    if (this.inBurst) return;
    this.inBurst = true;
    this.roundTrips++;
    queueMicrotask(() => (this.inBurst = false));
  }

  /** `<prefix>{<tenant>}:` — the hash tag keeps one tenant in one cluster slot; encoding keeps tenants apart. */
  tenantPrefix(tenant: string): string {
    return `${this.prefix}{${encodeURIComponent(tenant)}}:`;
  }

  /**
   * Every Redis failure but an error reply is one of answering (closed, refused, timed out, offline
   * queue disabled), and so are the replies of a node that cannot serve now (READONLY after a
   * failover, …): they reject as `store_unavailable`. Any other error reply (a script bug) passes as is.
   */
  private async answered<T>(p: Promise<T>): Promise<T> {
    try {
      return await loopFairDeadline(p, this.commandTimeoutMs, this.late);
    } catch (err) {
      throw (err instanceof ReplyError && !unavailableReply(err)) || err instanceof StorageError ? err : unavailable(err);
    }
  }

  private async exec(p: ReturnType<Redis['pipeline']>): Promise<unknown[]> {
    this.trip();
    const res = await this.answered(p.exec());
    if (!res) throw new StorageError('store_unavailable', 'redis: transaction aborted');
    const out: unknown[] = [];
    for (const [err, value] of res) {
      if (err) throw err instanceof ReplyError && !unavailableReply(err) ? err : unavailable(err);
      out.push(value);
    }
    return out;
  }
}
