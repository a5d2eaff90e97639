// A bounded memo of keys seen lately: what a store wrote recently need not be written again.
import { deleteOldest } from '@context-guru/components';

/** Keys seen within `ttlMs`, bounded (oldest forgotten first); `add` says whether a key was new. */
export class RecentSet {
  private readonly at = new Map<string, number>();
  constructor(
    private readonly max: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `key` was added within the last `ttlMs` (not counted as a sighting; a clock set back sees nothing). */
  has(key: string): boolean {
    const seen = this.at.get(key);
    const age = seen === undefined ? -1 : this.now() - seen;
    return age >= 0 && age < this.ttlMs;
  }

  /** Forgets every key (after an erasure: what was written lately may be gone). */
  clear(): void {
    this.at.clear();
  }

  add(key: string): boolean {
    const t = this.now();
    const seen = this.at.get(key);
    if (seen !== undefined && t - seen < this.ttlMs) return false;
    this.at.delete(key);
    this.at.set(key, t);
    if (this.at.size > this.max) deleteOldest(this.at);
    return true;
  }
}
