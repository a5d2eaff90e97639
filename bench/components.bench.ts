// Content-token savings and time per request, per component alone and per preset, on the
// project's corpus, both dialects. Each session's last turn goes through the gateway's real
// request path with CACHE_MODE=off (decisions may act at any depth), so this is what a component
// can remove from a transcript; on cache-aware traffic the tail gate spreads it over turns.
import { REGISTRY, countTokens, systemClock, PRESET_NAMES } from '@context-guru/components';
import { MemoryHotStore } from '@context-guru/storage';
import { createLogger, prepareRequest, createTenantRuntime } from '@context-guru/engine';
import { anthropicTurn, openaiTurn } from '../test/support/transcripts';
import { corpus } from './corpus';
import { table } from './bench-util';

interface Totals {
  before: number;
  after: number;
  ms: number;
  requests: number;
}

async function measure(doc: { preset?: string; pipeline?: string[] }, dialect: 'openai' | 'anthropic', only?: string): Promise<Totals> {
  const tenant = createTenantRuntime('bench', doc, 1);
  const t: Totals = { before: 0, after: 0, ms: 0, requests: 0 };
  for (const session of corpus()) {
    if (only && session.name !== only) continue;
    const raw = JSON.stringify(
      dialect === 'openai' ? openaiTurn(session.steps, session.steps.length) : anthropicTurn(session.steps, session.steps.length),
    );
    const deps = {
      store: new MemoryHotStore({ ttlSeconds: 10_000, maxEntries: 100_000 }),
      clock: systemClock,
      log: createLogger('error', () => undefined),
      injectMode: 'auto' as const,
    };
    const t0 = performance.now();
    const p = await prepareRequest(deps, {
      route: dialect,
      dialect,
      raw,
      tenant,
      pipeline: tenant.built.pipeline,
      cacheMode: 'off',
      sessionHeader: session.name,
      bypassHeader: false,
    });
    t.ms += performance.now() - t0;
    t.requests++;
    t.before += p.report.tokensBefore;
    t.after += p.report.tokensAfter;
  }
  return t;
}

function row(name: string, o: Totals, a: Totals): string[] {
  const pct = (x: Totals) => (x.before ? (((x.before - x.after) / x.before) * 100).toFixed(1) : '0.0');
  return [name, pct(o), pct(a), (o.ms / o.requests).toFixed(1), (a.ms / a.requests).toFixed(1)];
}

export async function runComponents(): Promise<string> {
  const header = ['pipeline', 'OpenAI saved %', 'Anthropic saved %', 'OpenAI ms/request', 'Anthropic ms/request'];
  const components: string[][] = [];
  for (const def of REGISTRY) {
    components.push(row(def.name, await measure({ pipeline: [def.name] }, 'openai'), await measure({ pipeline: [def.name] }, 'anthropic')));
  }
  const presets: string[][] = [];
  for (const preset of PRESET_NAMES) presets.push(row(preset, await measure({ preset }, 'openai'), await measure({ preset }, 'anthropic')));
  const commands: string[][] = [];
  for (const name of ['cmdfilter', 'failed_run', 'extract', 'collapse']) {
    commands.push(
      row(
        name,
        await measure({ pipeline: [name] }, 'openai', 'command-outputs'),
        await measure({ pipeline: [name] }, 'anthropic', 'command-outputs'),
      ),
    );
  }
  for (const preset of ['balanced', 'coding', 'agent']) {
    commands.push(
      row(
        `preset ${preset}`,
        await measure({ preset }, 'openai', 'command-outputs'),
        await measure({ preset }, 'anthropic', 'command-outputs'),
      ),
    );
  }
  const sessions = corpus();
  const tokens = sessions.reduce((n, s) => n + s.steps.reduce((m, st) => m + countTokens(st.output), 0), 0);
  return [
    `Corpus: ${sessions.map((s) => `${s.name} (${s.steps.length} tool outputs)`).join(', ')}; ${tokens} tool-output tokens. ms/request includes first-sight work (tokenizing, parsing, grammar loads on first use).`,
    '',
    '### Each component alone',
    '',
    table(header, components),
    '',
    '### Presets',
    '',
    table(header, presets),
    '',
    '### The real command outputs alone (the `command-outputs` session)',
    '',
    table(header, commands),
  ].join('\n');
}
