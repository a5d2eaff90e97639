// Stash writes are collected during a pipeline run and flushed in one batch before the request is
// forwarded: a marker may only reach the provider once its original is durably stored.
import { stashId } from '../shared/marker';

export interface StashEntry {
  id: string;
  text: string;
}

export interface StashWriter {
  /** False when the store cannot persist: `marker_mode: full` then degrades to off. */
  readonly persistent: boolean;
  /** Queue an original and return its id (first 16 hex of its SHA-256). */
  put(original: string): string;
}

/** Collects puts for one request; the gateway flushes `entries` to the hot store. */
export class BufferedStash implements StashWriter {
  readonly entries = new Map<string, string>();
  constructor(readonly persistent: boolean = true) {}

  put(original: string): string {
    const id = stashId(original);
    this.entries.set(id, original);
    return id;
  }

  list(): StashEntry[] {
    return [...this.entries].map(([id, text]) => ({ id, text }));
  }
}
