import { EnvError, envProblem, type EnvProblem } from '../../../libs/engine/src/env/env-errors';
import { parseDuration, parseModelEnv, readModelEnv } from '../../../apps/gateway/src/model/model-env';

describe('parseModelEnv', () => {
  it('has no cheap model by default, a cap of 4 and the 90 s / 300 s timeouts', () => {
    expect(parseModelEnv({})).toEqual({ concurrent: 4, extractTimeoutMs: 90_000, summarizeTimeoutMs: 300_000 });
  });

  it('infers the provider from the model name and takes the provider key as the default key', () => {
    const a = parseModelEnv({ CHEAP_MODEL: 'claude-haiku-4-5', ANTHROPIC_API_KEY: 'sk-ant-x', OPENAI_API_KEY: 'sk-o' });
    expect(a.cheap).toEqual({
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
      base: 'https://api.anthropic.com',
      key: 'sk-ant-x',
      auth: 'x-api-key',
    });
    const o = parseModelEnv({ CHEAP_MODEL: 'gpt-4o-mini', OPENAI_API_KEY: 'sk-o', CHEAP_MODEL_BASE: 'http://127.0.0.1:8000/v1/' });
    expect(o.cheap).toEqual({ provider: 'openai', model: 'gpt-4o-mini', base: 'http://127.0.0.1:8000/v1', key: 'sk-o', auth: 'bearer' });
  });

  it('lets CHEAP_MODEL_PROVIDER, CHEAP_MODEL_KEY and CHEAP_MODEL_AUTH override the defaults', () => {
    const e = parseModelEnv({
      CHEAP_MODEL: 'claude-via-proxy',
      CHEAP_MODEL_PROVIDER: 'openai',
      CHEAP_MODEL_KEY: 'k1',
      ANTHROPIC_API_KEY: 'unused',
      CHEAP_MODEL_AUTH: 'x-api-key',
      CHEAP_MODEL_CONCURRENT: '0',
      CONTEXT_GURU_LLM_TIMEOUT: '1m30s',
      CONTEXT_GURU_SUMMARIZE_TIMEOUT: '45',
    });
    expect(e).toEqual({
      cheap: { provider: 'openai', model: 'claude-via-proxy', base: 'https://api.openai.com', key: 'k1', auth: 'x-api-key' },
      concurrent: 0,
      extractTimeoutMs: 90_000,
      summarizeTimeoutMs: 45_000,
    });
  });

  it('reports every bad value at once', () => {
    let err: unknown;
    try {
      parseModelEnv({
        CHEAP_MODEL: 'm',
        CHEAP_MODEL_PROVIDER: 'gemini',
        CHEAP_MODEL_BASE: 'ftp://x',
        CHEAP_MODEL_CONCURRENT: '-1',
        CONTEXT_GURU_LLM_TIMEOUT: 'soon',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EnvError);
    expect((err as EnvError).problems.map((p) => [p.code, p.variable])).toEqual([
      ['invalid_integer', 'CHEAP_MODEL_CONCURRENT'],
      ['invalid_duration', 'CONTEXT_GURU_LLM_TIMEOUT'],
      ['invalid_choice', 'CHEAP_MODEL_PROVIDER'],
      ['invalid_url', 'CHEAP_MODEL_BASE'],
    ]);
  });

  it('collects problems into a caller list (for env.ts) and keeps the defaults', () => {
    const problems: EnvProblem[] = [envProblem('invalid_integer', 'PORT', 'x', 'an integer between 0 and 65535')];
    expect(readModelEnv({ CHEAP_MODEL_CONCURRENT: 'many' }, problems)).toEqual({
      concurrent: 4,
      extractTimeoutMs: 90_000,
      summarizeTimeoutMs: 300_000,
    });
    expect(problems).toHaveLength(2);
  });

  it('parses durations with units or as bare seconds', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1500ms')).toBe(1500);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1h1s')).toBe(3_601_000);
    expect(parseDuration('300')).toBe(300_000);
    expect(parseDuration('0')).toBeNull();
    expect(parseDuration('5 minutes')).toBeNull();
    expect(parseDuration('')).toBeNull();
  });
});
