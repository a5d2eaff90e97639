// Measured savings in the gateway: every billed turn of a tenant running a holdout is added to its
// session's row (per config version, in the ledger every replica shares), counted in the metrics by
// arm, and turned into the treated-vs-holdout estimate for /stats and the saving gauges. Estimates
// are memoised per tenant and version until the rows change (a bootstrap is not free).
import { ARMS, type Arm, deleteOldest } from '@context-guru/components';
import { byVersion, estimateSavings, type HoldoutSessionCost, type SavingsEstimate } from '@context-guru/storage';
import { errorText, type Logger, type RequestReport, type TenantRuntime, sessionHash } from '@context-guru/engine';
import type { GatewayMetrics } from '../observability/metrics';
import type { HoldoutLedger } from './holdout-ledger';

const MEMO_SIZE = 256;

/** What one version's rows look like, cheaply: an estimate is recomputed only when it changes. */
function fingerprint(rows: readonly HoldoutSessionCost[]): string {
  let usd = 0;
  let input = 0;
  let turns = 0;
  for (const r of rows) {
    usd += r.billedUsd;
    input += r.inputTokens;
    turns += r.turns;
  }
  return `${rows.length}:${usd}:${input}:${turns}`;
}

export class HoldoutFigures {
  /** Requests by arm in this process, per tenant (the shared figures are the ledger's). */
  private readonly requests = new Map<string, Record<Arm, number>>();
  private readonly memo = new Map<string, { print: string; estimate: SavingsEstimate }>();

  constructor(
    readonly ledger: HoldoutLedger,
    private readonly metrics: GatewayMetrics,
    private readonly log: Logger,
  ) {}

  /** A finished request and what the provider billed for it (the usage accounting's listener). */
  record(r: RequestReport, billedUsd: number): void {
    if (!r.measured || !r.arm || !r.session) return;
    const counts = this.requests.get(r.tenant) ?? { treated: 0, holdout: 0 };
    counts[r.arm]++;
    this.requests.set(r.tenant, counts);
    const labels = { tenant: this.metrics.tenants.label(r.tenant), arm: r.arm };
    this.metrics.holdoutRequests.inc(labels);
    // Only a turn the provider reported usage for has a bill to compare; others count in neither arm.
    if (!r.usage) return;
    this.metrics.holdoutBilledUsd.inc(labels, billedUsd);
    this.metrics.holdoutInputTokens.inc(labels, r.measured.inputTokens);
    this.ledger.add({
      tenant: r.tenant,
      version: r.measured.version,
      session: r.sessionHash ?? sessionHash(r.session),
      arm: r.arm,
      billedUsd,
      inputTokens: r.measured.inputTokens,
      turns: 1,
    });
  }

  /** The estimate for one version of a tenant, from the shared rows. */
  async estimate(tenant: string, version: number): Promise<SavingsEstimate> {
    return this.estimateOf(tenant, version, await this.ledger.list(tenant, version));
  }

  /** The `holdout` block of a tenant's /stats (absent when the tenant runs none and has no figures). */
  async statsBlock(t: TenantRuntime): Promise<Record<string, unknown> | undefined> {
    const requests = this.requests.get(t.id) ?? { treated: 0, holdout: 0 };
    let rows: HoldoutSessionCost[];
    try {
      rows = await this.ledger.list(t.id);
    } catch (err) {
      this.log.warn('holdout figures unavailable', { error: errorText(err) });
      return t.built.holdout
        ? { fraction: t.built.holdout.fraction, version: t.configVersion, requests, error: 'figures unavailable' }
        : undefined;
    }
    if (!t.built.holdout && rows.length === 0) return undefined;
    const versions = byVersion(rows, [t.configVersion]);
    const active = this.estimateOf(t.id, t.configVersion, versions.find(([v]) => v === t.configVersion)?.[1] ?? []);
    const others = versions
      .filter(([v]) => v !== t.configVersion)
      .map(([version, list]) => {
        const e = this.estimateOf(t.id, version, list);
        return {
          version,
          sessions: e.sessions,
          saving_pct: e.saving_pct,
          interval_low_pct: e.interval_low_pct,
          interval_high_pct: e.interval_high_pct,
          verdict: e.verdict,
        };
      });
    return { fraction: t.built.holdout?.fraction ?? null, version: t.configVersion, ...active, requests, versions: others };
  }

  /** Sets the saving and session gauges of every tenant running a holdout (at scrape time). */
  async refreshGauges(tenants: readonly TenantRuntime[]): Promise<void> {
    for (const t of tenants) {
      if (!t.built.holdout) continue;
      const tenant = this.metrics.tenants.label(t.id);
      let e: SavingsEstimate;
      try {
        e = await this.estimate(t.id, t.configVersion);
      } catch (err) {
        this.log.warn('holdout figures unavailable', { error: errorText(err) });
        continue;
      }
      for (const arm of ARMS) this.metrics.holdoutSessions.set({ tenant, arm }, e[arm].sessions);
      const bounds: Array<[string, number | null]> = [
        ['estimate', e.saving_pct],
        ['low', e.interval_low_pct],
        ['high', e.interval_high_pct],
      ];
      for (const [bound, pct] of bounds) {
        if (pct === null) this.metrics.holdoutSaving.remove({ tenant, bound });
        else this.metrics.holdoutSaving.set({ tenant, bound }, pct / 100);
      }
    }
  }

  private estimateOf(tenant: string, version: number, rows: readonly HoldoutSessionCost[]): SavingsEstimate {
    const key = `${tenant}\u0000${version}`;
    const print = fingerprint(rows);
    const hit = this.memo.get(key);
    if (hit && hit.print === print) return hit.estimate;
    const estimate = estimateSavings(rows);
    this.memo.delete(key);
    this.memo.set(key, { print, estimate });
    if (this.memo.size > MEMO_SIZE) deleteOldest(this.memo);
    return estimate;
  }
}
