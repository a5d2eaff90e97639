// Folds a finished request's provider-reported usage and its savings into the money metrics and
// the per-tenant money figures of /stats. Runs after the response was handed to the client. Every
// upstream answer counts exactly once: the one the client got (origin client), each one the expand
// loop consumed (origin expand), and each compaction-model call (origin model).
import type { Dialect } from '@context-guru/components';
import {
  type Usage,
  billedUsd,
  savedUsd,
  usageByKind,
  USAGE_KINDS,
  type UsageKind,
  type PriceTable,
  type RequestReport,
} from '@context-guru/engine';
import { KeyLedger } from '@context-guru/engine';
import type { GatewayMetrics } from './metrics';

export type Origin = 'client' | 'expand' | 'model';

interface MoneyTotals {
  usage: Record<Origin, Record<UsageKind, number>>;
  billed: Record<Origin, number>;
  savedPrefix: number;
  savedTail: number;
  savedUnique: number;
  savedPrefixUsd: number;
  savedTailUsd: number;
}

function zeroKinds(): Record<UsageKind, number> {
  return { fresh: 0, cache_read: 0, cache_write: 0, output: 0 };
}

function zeroTotals(): MoneyTotals {
  return {
    usage: { client: zeroKinds(), expand: zeroKinds(), model: zeroKinds() },
    billed: { client: 0, expand: 0, model: 0 },
    savedPrefix: 0,
    savedTail: 0,
    savedUnique: 0,
    savedPrefixUsd: 0,
    savedTailUsd: 0,
  };
}

const usd = (x: number): number => Math.round(x * 1e6) / 1e6;

/** The first round apart from the continuations (a field a stream cut short cannot go negative). */
function splitRounds(total: Usage | null, first: Usage | null | undefined): { client: Usage | null; expand: Usage | null } {
  if (!total || first === undefined) return { client: total, expand: null };
  if (!first) return { client: null, expand: total };
  const rest: Usage = {
    fresh: Math.max(0, total.fresh - first.fresh),
    cacheRead: Math.max(0, total.cacheRead - first.cacheRead),
    cacheWrite: Math.max(0, total.cacheWrite - first.cacheWrite),
    output: Math.max(0, total.output - first.output),
  };
  return { client: first, expand: rest };
}

/** Hears every recorded request with what the provider billed for it (client + expand + model, USD). */
export type BilledListener = (r: RequestReport, billedUsd: number) => void;

export class UsageAccounting {
  private readonly ledger = new KeyLedger();
  private readonly tenants = new Map<string, MoneyTotals>();

  constructor(
    private readonly metrics: GatewayMetrics,
    readonly prices: PriceTable,
    private readonly onBilled?: BilledListener,
  ) {}

  record(r: RequestReport): void {
    const t = this.totals(r.tenant);
    // Metric labels are bounded (overflow tenants fold into `other`); /stats keeps the real id.
    const tenant = this.metrics.tenants.label(r.tenant);
    let billed = 0;
    for (const c of r.modelCalls) {
      billed += this.bill(t, tenant, c.provider, 'model', { fresh: c.input, cacheRead: 0, cacheWrite: 0, output: c.output }, c.model);
    }
    // /compact forwards nothing: its model calls are spend, its savings reach no provider bill.
    if (r.route === 'compact') return;
    const dialect = r.route;
    // The answer the client got sums every round: its first round is the client's own request,
    // the rest the gateway's expand continuations.
    const split = splitRounds(r.usage ?? null, r.firstUsage);
    if (split.client) billed += this.bill(t, tenant, dialect, 'client', split.client, r.model);
    if (split.expand) billed += this.bill(t, tenant, dialect, 'expand', split.expand, r.model);
    this.onBilled?.(r, billed);
    if (!r.enforced) return;
    const preset = r.preset || 'custom';
    const saved = r.saved.prefix + r.saved.tail;
    if (saved > 0) {
      this.metrics.savedTokens.inc({ tenant, preset, dialect, where: 'prefix' }, r.saved.prefix);
      this.metrics.savedTokens.inc({ tenant, preset, dialect, where: 'tail' }, r.saved.tail);
      t.savedPrefix += r.saved.prefix;
      t.savedTail += r.saved.tail;
      const unique = saved * this.newShare(r);
      this.metrics.savedUniqueTokens.inc({ tenant, preset, dialect }, unique);
      t.savedUnique += unique;
    }
    // Only a billed turn has a rate to price the removed tokens at.
    if (!split.client || saved === 0) return;
    const value = savedUsd(dialect, r.saved, split.client, this.prices.lookup(dialect, r.model));
    this.metrics.savedUsd.inc({ tenant, preset, dialect, where: 'prefix' }, value.prefixUsd);
    this.metrics.savedUsd.inc({ tenant, preset, dialect, where: 'tail' }, value.tailUsd);
    t.savedPrefixUsd += value.prefixUsd;
    t.savedTailUsd += value.tailUsd;
  }

  private bill(t: MoneyTotals, tenant: string, dialect: Dialect, origin: Origin, u: Usage, model: string | undefined): number {
    const kinds = usageByKind(u);
    for (const kind of USAGE_KINDS) t.usage[origin][kind] += kinds[kind];
    const price = this.prices.lookup(dialect, model);
    const cost = billedUsd(u, price);
    this.metrics.usageTallies.add(tenant, dialect, origin, price.family, kinds, cost);
    t.billed[origin] += cost;
    return cost;
  }

  /**
   * The share of this turn's component savings that came from originals the tenant had not been
   * credited for yet; applied to the written savings so unique ≤ cumulative always.
   */
  private newShare(r: RequestReport): number {
    let all = 0;
    let fresh = 0;
    for (const rep of r.reports) {
      if (rep.reverted || rep.skipped) continue;
      const s = Math.max(0, rep.tokensBefore - rep.tokensAfter);
      all += s;
      fresh += s * this.ledger.freshFraction(`${r.tenant}\u0000${rep.component}`, rep.keys);
    }
    return all > 0 ? fresh / all : 0;
  }

  private totals(tenant: string): MoneyTotals {
    let t = this.tenants.get(tenant);
    if (!t) {
      t = zeroTotals();
      this.tenants.set(tenant, t);
    }
    return t;
  }

  /** The money figures of one tenant's /stats (a tenant never sees another's). */
  snapshot(tenant: string): { money: Record<string, unknown> } {
    return { money: view(this.tenants.get(tenant) ?? zeroTotals()) };
  }
}

function view(t: MoneyTotals): Record<string, unknown> {
  const billedTotal = t.billed.client + t.billed.expand + t.billed.model;
  const gross = t.savedPrefixUsd + t.savedTailUsd;
  const overhead = t.billed.expand + t.billed.model;
  return {
    usage: { client: { ...t.usage.client }, expand: { ...t.usage.expand }, model: { ...t.usage.model } },
    billed_usd: { client: usd(t.billed.client), expand: usd(t.billed.expand), model: usd(t.billed.model), total: usd(billedTotal) },
    saved_tokens: { cumulative: t.savedPrefix + t.savedTail, unique: Math.round(t.savedUnique), prefix: t.savedPrefix, tail: t.savedTail },
    saved_usd_gross: usd(gross),
    saved_usd_prefix: usd(t.savedPrefixUsd),
    saved_usd_tail: usd(t.savedTailUsd),
    overhead_usd: usd(overhead),
    saved_usd_net: usd(gross - overhead),
    bill_with_usd: usd(billedTotal),
    bill_without_usd: usd(t.billed.client + gross),
  };
}
