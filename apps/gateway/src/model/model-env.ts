// The compaction model's environment, parsed once at boot like the rest of env.ts: the dedicated
// cheap model (CHEAP_MODEL*), the process-wide concurrency cap and the per-call timeouts. Every bad
// value is reported together; env.ts folds these problems into its own (readModelEnv).
import type { Dialect } from '@context-guru/components';
import { EnvError, envProblem, type EnvProblem, envReaders, HTTP_URL, type EnvReaders } from '@context-guru/engine';

type ModelAuth = 'x-api-key' | 'bearer';

export interface CheapModel {
  provider: Dialect;
  model: string;
  base: string;
  key?: string;
  auth: ModelAuth;
}

export interface ModelEnv {
  /** The `config` source; absent when CHEAP_MODEL is unset. */
  cheap?: CheapModel;
  /** Compaction-model calls in flight across the process; 0 = unlimited. */
  concurrent: number;
  extractTimeoutMs: number;
  summarizeTimeoutMs: number;
}

const DEFAULT_BASE: Record<Dialect, string> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com',
  responses: 'https://api.openai.com',
  gemini: 'https://generativelanguage.googleapis.com',
};

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `90s`, `1m30s`, `1500ms` or bare seconds (`300`). Null when malformed or not positive.
 * @internal exported for tests
 */
export function parseDuration(v: string): number | null {
  const t = v.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) > 0 ? Math.round(Number(t) * 1000) : null;
  const parts = [...t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== t) return null;
  let ms = 0;
  for (const [, amount, unit] of parts) {
    const scale = unit === undefined ? undefined : UNIT_MS[unit];
    if (scale === undefined) return null; // the pattern only matches known units
    ms += Number(amount) * scale;
  }
  return ms > 0 ? Math.round(ms) : null;
}

type Source = Record<string, string | undefined>;

/**
 * Throws EnvError listing every bad value.
 * @internal exported for tests
 */
export function parseModelEnv(src: Source = process.env): ModelEnv {
  const problems: EnvProblem[] = [];
  const env = readModelEnv(src, problems);
  if (problems.length) throw new EnvError(problems);
  return env;
}

/** Reads the model environment, appending each bad value to `problems` (defaults stand in). */
export function readModelEnv(src: Source, problems: EnvProblem[]): ModelEnv {
  const read = envReaders(src, problems);
  const duration = (key: string, def: number): number => {
    const v = read.text(key);
    if (v === undefined) return def;
    const ms = parseDuration(v);
    if (ms === null) problems.push(envProblem('invalid_duration', key, v, 'a positive duration like 90s, 1m30s, 1500ms or bare seconds'));
    return ms ?? def;
  };
  const env: ModelEnv = {
    concurrent: readConcurrent(src, problems),
    extractTimeoutMs: duration('CONTEXT_GURU_LLM_TIMEOUT', 90_000),
    summarizeTimeoutMs: duration('CONTEXT_GURU_SUMMARIZE_TIMEOUT', 300_000),
  };
  const model = read.text('CHEAP_MODEL');
  if (model) env.cheap = readCheapModel(src, read, model);
  return env;
}

function readConcurrent(src: Source, problems: EnvProblem[]): number {
  const raw = src.CHEAP_MODEL_CONCURRENT;
  if (raw === undefined || raw === '') return 4;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 0) return n;
  problems.push(envProblem('invalid_integer', 'CHEAP_MODEL_CONCURRENT', raw, 'an integer ≥ 0 (0 = unlimited)'));
  return 4;
}

/** CHEAP_MODEL is set: the provider (guessed from the model name unless given), auth, base URL and key. */
function readCheapModel(src: Source, read: EnvReaders, model: string): CheapModel {
  const guessed: Dialect = /claude|anthropic/i.test(model) ? 'anthropic' : 'openai';
  const provider = read.oneOf<Dialect, Dialect>('CHEAP_MODEL_PROVIDER', ['anthropic', 'openai'], guessed);
  const auth = read.oneOf<ModelAuth, ModelAuth>(
    'CHEAP_MODEL_AUTH',
    ['x-api-key', 'bearer'],
    provider === 'anthropic' ? 'x-api-key' : 'bearer',
  );
  const base = read.url('CHEAP_MODEL_BASE', DEFAULT_BASE[provider], HTTP_URL);
  const key = src.CHEAP_MODEL_KEY || (provider === 'anthropic' ? src.ANTHROPIC_API_KEY : src.OPENAI_API_KEY) || undefined;
  return { provider, model, base, key, auth };
}
