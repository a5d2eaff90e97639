// The priced-rewrite families: rewrites made on purpose inside the provider-cached prefix, apart
// from the cache guard's reverts (accidents), with what they cost once and save on later turns.
import { Counter, type Registry } from 'prom-client';

export function plannedRewriteMetrics(registry: Registry) {
  return {
    rewrites: new Counter({
      name: 'cg_planned_rewrites_total',
      help: 'Priced rewrites inside the provider-cached prefix (made on purpose, apart from busts).',
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'cg_planned_rewrite_tokens_total',
      help: 'Priced rewrites in input tokens at the uncached rate: what they cost once, and what each later turn saves.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    usd: new Counter({
      name: 'cg_planned_rewrite_usd_total',
      help: 'Priced rewrites in USD (tenant price table): what they cost once, and what each later turn saves.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
  };
}
