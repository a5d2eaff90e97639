// The durable store's rows on their way in and out: archive texts and checkpoint replacements are
// sealed per tenant when a batch is flushed (off the request path) and opened when read back.
import type { ArchivedStash } from '../sql/durable.types';
import type { Checkpoint } from '../sql/session-lookups';
import type { KeyRing } from './keyring';
import { frozenAad, sealEntries } from './sealed-value';

/** [tenant, session, slot, replacement]. */
type SlotRow = [string, string, string, string];

function byTenant<T>(items: readonly T[], tenantOf: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const t = tenantOf(it);
    const group = m.get(t);
    if (group) group.push(it);
    else m.set(t, [it]);
  }
  return m;
}

/** Archive rows with their text sealed, each under its own tenant's key. */
export async function sealedArchive(keys: KeyRing | undefined, batch: readonly ArchivedStash[]): Promise<readonly ArchivedStash[]> {
  if (!keys) return batch;
  const out: ArchivedStash[] = [];
  for (const [tenant, rows] of byTenant(batch, (e) => e.tenant)) out.push(...sealEntries(await keys.forTenant(tenant), rows));
  return out;
}

/** Checkpoint rows with the replacement sealed, bound to its session and slot. */
export async function sealedSlots(keys: KeyRing | undefined, rows: SlotRow[]): Promise<SlotRow[]> {
  if (!keys) return rows;
  const out: SlotRow[] = [];
  for (const [tenant, group] of byTenant(rows, (r) => r[0])) {
    const k = await keys.forTenant(tenant);
    for (const [t, s, slot, r] of group) out.push([t, s, slot, k.seal(r, frozenAad(s, slot))]);
  }
  return out;
}

/** A loaded checkpoint with its replacements opened (one that does not open is left out: lost). */
export async function openedCheckpoint(keys: KeyRing, tenant: string, session: string, cp: Checkpoint): Promise<Checkpoint> {
  if (cp.frozen.size === 0) return cp;
  const k = await keys.opener(tenant, [...cp.frozen.values()]);
  const frozen = new Map<string, string>();
  for (const [slot, v] of cp.frozen) {
    const plain = k.open(v, frozenAad(session, slot));
    if (plain !== undefined) frozen.set(slot, plain);
  }
  return { ...cp, frozen };
}
