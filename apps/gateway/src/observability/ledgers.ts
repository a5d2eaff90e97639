// The cmdfilter ledgers surfaced in /stats: which command outputs still pass through unfiltered,
// and what each filter and family saved. One set per tenant of a gateway context (tenant-stats.ts),
// fed from the reports of the runs whose messages were forwarded (a re-run or a reverted component
// counts nothing), so neither another tenant nor another gateway in the process sees its traffic.
// Keys are omitted while empty (append-only contract).
import { FilterActStats, SelectorMissLedger } from '@context-guru/dsl';
import { type RequestReport } from '@context-guru/engine';

export class CmdfilterLedgers {
  private readonly misses = new SelectorMissLedger(200, 120);
  private readonly acts = new FilterActStats();

  record(r: RequestReport): void {
    for (const report of r.reports) {
      if (report.reverted || !report.ledger) continue;
      for (const e of report.ledger) {
        if (e.kind === 'selector_miss') this.misses.record(e.selector, e.contentKey);
        else this.acts.record(e.filter, e.family, e.savedTokens, e.stashKey);
      }
    }
  }

  snapshot(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const { filters, families } = this.acts.snapshot();
    if (Object.keys(filters).length) out.cmdfilter_filters = filters;
    if (Object.keys(families).length) out.cmdfilter_families = families;
    const misses = this.misses.top(20);
    if (misses.length) out.cmdfilter_selector_misses = misses;
    return out;
  }
}
