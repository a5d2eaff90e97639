// Which sessions the hot store has not been checked against the durable store for since the last
// degraded period. A Redis failover promotes a replica that never saw the turns served meanwhile
// from Postgres alone (and one write acknowledged just before the kill may not have replicated):
// its copy of a session is older than the durable one, yet it answers first. So the first read of
// each session after such a period consults the durable store too, whatever this process owes.
import { deleteOldest, type TurnRecord } from '@context-guru/components';
import type { DurableStore } from './sql/durable.store';
import { errorText, type StorageLogger } from './storage-logger';

/** Sessions remembered as checked at most; one forgotten is merely checked again. */
const MAX_CHECKED = 100_000;

export class AfterOutage {
  /** Degraded periods seen by this process; 0: never, nothing to check. */
  private epoch = 0;
  private readonly checked = new Map<string, number>();

  /** The hot store stopped answering (or answered from elsewhere): every session is suspect again. */
  degraded(): void {
    this.epoch++;
  }

  /** True once per `what` of a session after each degraded period: the caller checks it now. */
  first(tenant: string, session: string, what: 'turn' | 'state'): boolean {
    if (this.epoch === 0) return false;
    const k = `${tenant}\u0000${session}\u0000${what}`;
    if (this.checked.get(k) === this.epoch) return false;
    this.checked.delete(k);
    this.checked.set(k, this.epoch);
    if (this.checked.size > MAX_CHECKED) deleteOldest(this.checked);
    return true;
  }
}

/** The durable turn record; none when the database does not answer (the hot one is served). */
export async function storedTurn(durable: DurableStore, log: StorageLogger, tenant: string, session: string): Promise<TurnRecord | null> {
  try {
    return await durable.loadTurn(tenant, session);
  } catch (err) {
    log.warn('durable turn lookup failed; serving the hot turn record (or none)', { err: errorText(err) });
    return null;
  }
}
