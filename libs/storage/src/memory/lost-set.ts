// The frozen-lost marks of one tenant: a bounded FIFO (oldest mark dropped first) indexed by
// session, so a snapshot can report a session's lost slots without scanning every mark.

export class LostSet {
  /** `session\0slot` in insertion order. */
  private readonly fifo = new Set<string>();
  private readonly bySession = new Map<string, Set<string>>();

  constructor(
    private readonly bound: number,
    /** Told of the session of every mark dropped to keep the bound. */
    private readonly onDrop: (session: string) => void = () => {},
  ) {}

  get size(): number {
    return this.fifo.size;
  }

  add(session: string, slot: string): void {
    const k = `${session}\u0000${slot}`;
    this.fifo.delete(k);
    this.fifo.add(k);
    let s = this.bySession.get(session);
    if (!s) this.bySession.set(session, (s = new Set()));
    s.add(slot);
    // Oldest first; remove() deletes from fifo as we go, which a Set's iteration allows.
    for (const oldest of this.fifo) {
      if (this.fifo.size <= this.bound) break;
      const i = oldest.indexOf('\u0000');
      const session = oldest.slice(0, i);
      this.remove(session, oldest.slice(i + 1));
      this.onDrop(session);
    }
  }

  /** Removes a mark; true when there was one (the caller counts a repair). */
  remove(session: string, slot: string): boolean {
    if (!this.fifo.delete(`${session}\u0000${slot}`)) return false;
    const s = this.bySession.get(session);
    s?.delete(slot);
    if (s && s.size === 0) this.bySession.delete(session);
    return true;
  }

  slots(session: string): ReadonlySet<string> {
    return this.bySession.get(session) ?? EMPTY;
  }

  clear(): void {
    this.fifo.clear();
    this.bySession.clear();
  }
}

const EMPTY: ReadonlySet<string> = new Set();
