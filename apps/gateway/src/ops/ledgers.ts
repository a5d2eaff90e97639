// The cmdfilter ledgers surfaced in /stats: which command outputs still pass through unfiltered.
export function cmdfilterLedgers(): Record<string, unknown> {
  return {};
}
