/**
 * Deletes the oldest entry of a Map or Set (they iterate in insertion order): how a bounded memo
 * makes room. A no-op on an empty one, so no caller needs to assert that a first key exists.
 */
export function deleteOldest<K>(c: Map<K, unknown> | Set<K>): void {
  for (const k of c.keys()) {
    c.delete(k);
    return;
  }
}
