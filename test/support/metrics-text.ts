// Reads the Prometheus text exposition the gateway serves, independently of prom-client, so tests
// check the bytes a scraper gets: one sample per line, `name{label="value",...} number`.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

export async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`);
  return parseMetrics(await res.text());
}

/** The sum of every sample of `name` whose labels include `match`. */
export function metricSum(samples: readonly Sample[], name: string, match: Record<string, string>): number {
  let n = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) n += s.value;
  }
  return n;
}

/**
 * What a dialect's expand sessions must leave in the metrics, by its own label: upstream calls,
 * billed usage by origin (cache reads among the client's, fresh tokens among the continuations'),
 * money and saved tokens, and no chat-completions call among them. The figures that are not so,
 * by name ([] when all are).
 */
export function missingDialectFigures(samples: readonly Sample[], dialect: string): string[] {
  const d = { dialect };
  const positive: Record<string, number> = {
    upstream2xx: metricSum(samples, 'cg_upstream_responses_total', { ...d, status: '2xx' }),
    clientCacheRead: metricSum(samples, 'cg_usage_tokens_total', { ...d, origin: 'client', kind: 'cache_read' }),
    expandFresh: metricSum(samples, 'cg_usage_tokens_total', { ...d, origin: 'expand', kind: 'fresh' }),
    billedUsd: metricSum(samples, 'cg_billed_usd_total', d),
    saved: metricSum(samples, 'cg_saved_tokens_total', d),
  };
  const missing = Object.keys(positive).filter((k) => !((positive[k] ?? 0) > 0));
  if (metricSum(samples, 'cg_upstream_responses_total', { dialect: 'openai' }) !== 0) missing.push('no chat-completions calls');
  return missing;
}
