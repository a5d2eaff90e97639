// Stash writes are collected during a pipeline run and flushed in one batch before the request is
// forwarded: a marker may only reach the provider once its original is durably stored.
import { stashId } from '../shared/marker';

export interface StashEntry {
  id: string;
  text: string;
}

/**
 * How a deployment names an original. The gateway keys it per tenant (docs/security.md, marker
 * ids) so an id confirms nothing about a guessed original without the key; the library default
 * is the unkeyed `stashId`. Must be a pure function: replays and replicas re-derive the same id.
 */
export type StashIdOf = (original: string) => string;

/**
 * A tenant's keyed digest for names derived from content or ids (docs/security.md): the derived
 * session id and the session hash in traces. 16 hex of HMAC under the tenant's key, one domain per
 * `purpose`; pure, so replicas and restarts derive the same name.
 */
export interface KeyedNames {
  name(purpose: string, input: string): string;
}

/** Per-tenant marker ids (the storage key ring's; a load may take a round trip the first time). */
export interface MarkerIdSource {
  idsFor(tenant: string): StashIdOf | Promise<StashIdOf>;
  /** The tenant's keyed names (absent: names stay unkeyed, as a library caller without a key ring has them). */
  namesFor?(tenant: string): KeyedNames | Promise<KeyedNames>;
}

export interface StashWriter {
  /** False when the store cannot persist: `marker_mode: full` then degrades to off. */
  readonly persistent: boolean;
  /**
   * The tenant's stash budget is spent: an offloader that would stash a new original leaves the
   * output as it is (a replayed decision still re-puts the original it names).
   */
  readonly full?: boolean;
  /** The id `put` gives an original, without queuing it. */
  idOf(original: string): string;
  /**
   * Queue an original and return its id. `id` names it otherwise: a frozen decision replayed with
   * an id minted before ids were keyed keeps that id resolvable.
   */
  put(original: string, id?: string): string;
}

/** Collects puts for one request; the gateway flushes `entries` to the hot store. */
export class BufferedStash implements StashWriter {
  readonly entries = new Map<string, string>();
  constructor(
    readonly persistent: boolean = true,
    readonly idOf: StashIdOf = stashId,
    readonly full = false,
  ) {}

  put(original: string, id: string = this.idOf(original)): string {
    this.entries.set(id, original);
    return id;
  }

  list(): StashEntry[] {
    return [...this.entries].map(([id, text]) => ({ id, text }));
  }
}

/**
 * The id under which a decision's replacement `rep` refers to `original`: the current id, or the
 * unkeyed one a replacement frozen before ids were keyed carries. Undefined: `rep` has no marker for it.
 */
export function frozenMarkerId(rep: readonly string[], original: string, stash: Pick<StashWriter, 'idOf'>): string | undefined {
  if (rep.length === 0) return undefined;
  const id = stash.idOf(original);
  if (rep.includes(id)) return id;
  const legacy = stashId(original);
  return rep.includes(legacy) ? legacy : undefined;
}
