// The hot store a detached run (the admin's dry-run, a shadow evaluation) prepares against: it
// reads nothing (a fresh session, no frozen decisions) and keeps every write in this object only,
// so the pipeline behaves as on a first turn — markers included, since it reports itself
// persistent — while no real store, session state or turn record is ever touched.
import type { HotStore, SessionSnapshot, SessionWrites, StashEntry, StoreHealth, TurnRecord } from '@context-guru/components';

export class KeepNothingStore implements HotStore {
  readonly kind = 'keep-nothing';
  readonly persistent = true;
  /** Originals the run would have stashed, by id. */
  readonly stashed = new Map<string, string>();
  frozen = 0;

  async putStash(_tenant: string, _session: string, entries: readonly StashEntry[]): Promise<void> {
    for (const e of entries) this.stashed.set(e.id, e.text);
  }

  async getStash(_tenant: string, id: string): Promise<string | null> {
    return this.stashed.get(id) ?? null;
  }

  async owns(_tenant: string, _session: string, id: string): Promise<boolean> {
    return this.stashed.has(id);
  }

  async loadSession(): Promise<SessionSnapshot> {
    return { frozen: new Map(), lost: new Set(), kept: new Set() };
  }

  async commitSession(_tenant: string, _session: string, writes: SessionWrites): Promise<void> {
    this.frozen += writes.frozen.size;
  }

  async markKept(): Promise<void> {}

  async advanceTurn(_tenant: string, _session: string, _turn: TurnRecord): Promise<TurnRecord | null> {
    return null;
  }

  async recordRewrites(): Promise<void> {}

  health(): StoreHealth {
    return { frozenDropped: 0, frozenRepaired: 0 };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}
}
