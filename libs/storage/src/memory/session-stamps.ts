// Change stamps for the in-process store's snapshots: a number that changes whenever anything
// loadSession could answer for a session changes (a decision written or lost, the sticky expand
// flag, the arm, a kept mark anywhere in the tenant) and never on a TTL slide. A caller holding a
// snapshot and the stamp read just before it may reuse that snapshot while the stamp holds.
import { deleteOldest } from '@context-guru/components';

/** Sessions with a stamp of their own; the least recently changed is forgotten first. */
const MAX_SESSIONS = 100_000;

/** One clock for every store in the process: a stamp is never handed out twice, even after close(). */
let clock = 0;

export class SessionStamps {
  private readonly bySession = new Map<string, number>();
  /** The stamp of every session without its own: raised whenever one is forgotten. */
  private floor = ++clock;
  /** The last change to a kept mark (tenant-wide: any session may carry that content). */
  private kept = 0;

  changed(session: string): void {
    this.bySession.delete(session);
    this.bySession.set(session, ++clock);
    if (this.bySession.size > MAX_SESSIONS) {
      deleteOldest(this.bySession);
      this.floor = ++clock;
    }
  }

  keptChanged(): void {
    this.kept = ++clock;
  }

  of(session: string): number {
    return Math.max(this.bySession.get(session) ?? this.floor, this.kept);
  }
}
