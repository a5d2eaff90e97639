// The archive's side of a tenant's byte budget for stored originals (docs/security.md, abuse
// bounds), checked on the request path before a turn's writes, as the Redis write script checks
// the hot store's: a turn whose new originals would take the tenant's archive past the budget is
// refused whole, and the gateway runs it again with a stash that takes nothing new (no marker
// that could not be resolved once the hot copy is gone).
//
// Postgres (shared by replicas): the new originals are archived there and then, in a transaction
// holding the tenant's lock (sql/stash-bytes.ts), so replicas cannot both spend the same room.
// PGlite (this process is the database's only writer): the usage the store counted plus what is
// queued is exact, so the check costs no statement until the tenant nears its budget; then the
// archive says which of the originals it already holds (a re-put costs nothing).
import type { SessionSnapshot, StashEntry } from '@context-guru/components';
import type { DurableStore } from './sql/durable.store';
import { errorText, type StorageLogger } from './storage-logger';
import { archivedAs } from './tiered-snapshot';
import type { WriteBehindQueue } from './write-behind.queue';

/** What the check decided: refused, archived already (Postgres), or to be queued as usual. */
export type Admission = 'refused' | 'archived' | 'queue';

export class ArchiveBudget {
  /** Turns whose new originals the archive's budget refused, per tenant (this process's count). */
  readonly refused = new Map<string, number>();
  /** Bytes admitted by turns still committing, per tenant (not yet queued): a concurrent check counts them. */
  private readonly admitting = new Map<string, number>();

  /** `maxBytes`: per tenant, 0 for none. */
  constructor(
    readonly maxBytes: number,
    private readonly durable: DurableStore,
    private readonly queue: WriteBehindQueue,
    private readonly log: StorageLogger,
  ) {}

  /**
   * `fresh`: the turn's originals the store has not archived lately. Resolves with the admission
   * and a release to call once the turn's writes are queued (or abandoned).
   */
  async admit(tenant: string, session: string, fresh: readonly StashEntry[]): Promise<{ admission: Admission; release: () => void }> {
    const none = () => undefined;
    if (this.maxBytes <= 0 || fresh.length === 0) return { admission: 'queue', release: none };
    if (!this.durable.sql.exclusive) return { admission: await this.archiveLocked(tenant, session, fresh), release: none };
    let bytes: number | undefined;
    try {
      bytes = await this.newBytes(tenant, fresh);
    } catch (err) {
      this.log.warn('archive budget check failed; queued unchecked', { err: errorText(err) });
      return { admission: 'queue', release: none };
    }
    if (bytes === undefined) return { admission: this.refuse(tenant), release: none };
    this.admitting.set(tenant, (this.admitting.get(tenant) ?? 0) + bytes);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.admitting.get(tenant) ?? 0) - bytes;
      if (left > 0) this.admitting.set(tenant, left);
      else this.admitting.delete(tenant);
    };
    return { admission: 'queue', release };
  }

  /** The bytes the originals add when they fit the tenant's room, undefined when they do not. */
  private async newBytes(tenant: string, fresh: readonly StashEntry[]): Promise<number | undefined> {
    const used = (await this.durable.stashBytes.of(tenant)) + this.queue.queuedStashBytes(tenant) + (this.admitting.get(tenant) ?? 0);
    const size = (list: readonly StashEntry[]) => list.reduce((n, e) => n + this.durable.stashBytes.storedBytes(e.text), 0);
    const all = size(fresh);
    if (used + all <= this.maxBytes) return all;
    // Near the budget: an original archived or queued already costs nothing again.
    const held = await this.durable.stashBytes.archivedAmong(
      tenant,
      fresh.map((e) => e.id),
    );
    const added = size(fresh.filter((e) => !held.has(e.id) && !this.queue.pendingStash(tenant, e.id)));
    return added === 0 || used + added <= this.maxBytes ? added : undefined;
  }

  private async archiveLocked(tenant: string, session: string, fresh: readonly StashEntry[]): Promise<Admission> {
    try {
      return (await this.durable.archiveWithin(tenant, archivedAs(tenant, session, fresh), this.maxBytes))
        ? 'archived'
        : this.refuse(tenant);
    } catch (err) {
      // The database does not answer: the turn goes on, its originals queued behind as before
      // (the budget cannot be checked while the archive is away).
      this.log.warn('archive budget check failed; queued unchecked', { err: errorText(err) });
      return 'queue';
    }
  }

  /** Counts a refused turn (this budget's, or the write-behind queue's: both are the tenant's stash_refused). */
  refuse(tenant: string): 'refused' {
    this.refused.set(tenant, (this.refused.get(tenant) ?? 0) + 1);
    return 'refused';
  }
}

/** What a refused turn answers: nothing written, run again with no new original. */
export function refusedSnapshot(): SessionSnapshot {
  return { frozen: new Map(), lost: new Set(), kept: new Set(), stashFull: true };
}

/** Two per-tenant refusal counts as one (the hot store's and the archive's). */
export function addCounts(a: ReadonlyMap<string, number> | undefined, b: ReadonlyMap<string, number>): ReadonlyMap<string, number> {
  const out = new Map(a ?? []);
  for (const [t, n] of b) out.set(t, (out.get(t) ?? 0) + n);
  return out;
}
