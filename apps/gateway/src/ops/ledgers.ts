// The cmdfilter ledgers surfaced in /stats: which command outputs still pass through unfiltered,
// and what each filter and family saved. Keys are omitted while empty (append-only contract).
import { cmdfilterActs, cmdfilterMissLedger } from '@context-guru/components';

export function cmdfilterLedgers(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const { filters, families } = cmdfilterActs.snapshot();
  if (Object.keys(filters).length) out.cmdfilter_filters = filters;
  if (Object.keys(families).length) out.cmdfilter_families = families;
  const misses = cmdfilterMissLedger.top(20);
  if (misses.length) out.cmdfilter_selector_misses = misses;
  return out;
}
