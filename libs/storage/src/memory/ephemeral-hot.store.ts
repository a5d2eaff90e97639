// `store.enabled: false`: the session state the cache-awareness needs (turn records, frozen
// decisions) still lives in memory, but no original is kept, so the store reports itself as not
// persistent and every offloader degrades `marker_mode: full` to `off` — no marker is ever emitted
// that could not be resolved.
import type { StashEntry } from '@context-guru/components';
import { MemoryHotStore } from './memory-hot.store';

export class EphemeralHotStore extends MemoryHotStore {
  override readonly kind = 'memory-ephemeral';
  override readonly persistent = false;

  override async putStash(_tenant: string, _session: string, _entries: readonly StashEntry[]): Promise<void> {}
}
