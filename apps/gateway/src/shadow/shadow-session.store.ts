// The candidate's own memory of the sessions it shadows, private to one replica's shadow runner:
// its turn records (so it sees the provider cache boundary a session it served would have) and its
// own frozen decisions (so a decision made while a message was in the tail replays on later turns,
// as it would if the candidate were active). Without it the candidate decides every turn as on a
// session's first, over the whole conversation, and overstates what it would save. It is never the
// tenant's session state — the real path neither reads nor writes it — and it never stashes: an
// original handed to putStash is dropped (markers the candidate writes are counted, not resolvable).
// Bounded: a sliding-TTL LRU of MAX_ENTRIES per candidate.
import type { HotStore, SessionSnapshot, SessionWrites, StashEntry, StoreHealth, TurnRecord } from '@context-guru/components';
import { MemoryHotStore } from '@context-guru/storage';

const SHADOW_SESSION_ENTRIES = 20_000;
const SHADOW_SESSION_TTL_SECONDS = 3600;

export class ShadowSessionStore implements HotStore {
  readonly kind = 'shadow-session';
  /** As a real store: the candidate offloads exactly as it would when active. */
  readonly persistent = true;
  /** Originals the candidate would have stashed (dropped here, counted). */
  dropped = 0;
  private readonly memory: MemoryHotStore;

  constructor(o: { maxEntries?: number; ttlSeconds?: number; now?: () => number } = {}) {
    this.memory = new MemoryHotStore({
      maxEntries: o.maxEntries ?? SHADOW_SESSION_ENTRIES,
      ttlSeconds: o.ttlSeconds ?? SHADOW_SESSION_TTL_SECONDS,
      now: o.now,
    });
  }

  async putStash(_tenant: string, _session: string, entries: readonly StashEntry[]): Promise<void> {
    this.dropped += entries.length;
  }

  async getStash(): Promise<string | null> {
    return null;
  }

  async owns(): Promise<boolean> {
    return false;
  }

  loadSession(tenant: string, session: string, contentKeys: readonly string[]): Promise<SessionSnapshot> {
    return this.memory.loadSession(tenant, session, contentKeys);
  }

  commitSession(tenant: string, session: string, writes: SessionWrites): Promise<void> {
    return this.memory.commitSession(tenant, session, writes);
  }

  async markKept(): Promise<void> {}

  advanceTurn(tenant: string, session: string, turn: TurnRecord): Promise<TurnRecord | null> {
    return this.memory.advanceTurn(tenant, session, turn);
  }

  recordRewrites(tenant: string, session: string, rewritten: readonly number[]): Promise<void> {
    return this.memory.recordRewrites(tenant, session, rewritten);
  }

  /** Entries held (turn records, frozen decisions, flags) for the tenant. */
  entries(tenant: string): number {
    return this.memory.stats(tenant).entries;
  }

  health(): StoreHealth {
    return this.memory.health();
  }

  async ping(): Promise<void> {}

  close(): Promise<void> {
    return this.memory.close();
  }
}
