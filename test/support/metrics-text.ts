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
