// The price table and the money formula: family lookup and overrides, strict PRICE_TABLE parsing,
// and the rate each removed token is priced at depending on what the provider billed that turn.
import { createPriceTable, parsePriceTable, readPriceTable } from '../../../libs/engine/src/report/price-table';
import { billedUsd, savedUsd } from '../../../libs/engine/src/report/money';
import type { EnvProblem } from '../../../libs/engine/src/env/env-errors';
import { parseEnv } from '../../../apps/gateway/src/env';
import { headModel } from '../../../apps/gateway/src/observability/labels';

describe('price table', () => {
  const prices = createPriceTable();

  it('finds the family of current model ids, dated and routed ones included', () => {
    expect(prices.lookup('anthropic', 'claude-sonnet-4-5-20250929').family).toBe('claude-sonnet');
    expect(prices.lookup('anthropic', 'anthropic.claude-3-5-haiku-20241022-v1:0').family).toBe('claude-haiku-3.5');
    expect(prices.lookup('anthropic', 'claude-opus-4-1-20250805').family).toBe('claude-opus-4');
    expect(prices.lookup('anthropic', 'claude-opus-4-5').family).toBe('claude-opus-4.5+');
    expect(prices.lookup('openai', 'gpt-4o-mini-2024-07-18').family).toBe('gpt-4o-mini');
    expect(prices.lookup('openai', 'openai/gpt-5-mini').family).toBe('gpt-5-mini');
    expect(prices.lookup('openai', 'gpt-4.1-2025-04-14').family).toBe('gpt-4.1');
  });

  it('prices an unknown model at the dialect default, under a name that says so', () => {
    expect(prices.lookup('openai', 'my-local-llama').family).toBe('openai-default');
    expect(prices.lookup('anthropic', undefined).family).toBe('anthropic-default');
  });

  it('PRICE_TABLE replaces a default family by name and adds new ones ahead of the defaults', () => {
    const custom = createPriceTable(
      parsePriceTable(
        'families:\n  - { family: claude-sonnet, match: [claude-sonnet], input: 2, output: 10 }\n  - { family: llama, match: [llama], input: 0.1, output: 0.2, cache_read: 0.01 }\n',
      ),
    );
    const sonnet = custom.lookup('anthropic', 'claude-sonnet-4-6');
    expect(sonnet).toEqual({ family: 'claude-sonnet', match: ['claude-sonnet'], input: 2, cache_write: 2, cache_read: 2, output: 10 });
    expect(custom.lookup('openai', 'llama-3-70b').cache_read).toBe(0.01);
    expect(custom.families()).toContain('llama');
  });

  it('rejects a bad PRICE_TABLE naming the place, through the environment parser', () => {
    expect(() => parsePriceTable('families:\n  - { family: x, match: [x], input: 1, output: 1, cahce_read: 1 }\n')).toThrow(/families\/0/);
    expect(() => parsePriceTable('families: [{ family: x, match: [], input: 1, output: 1 }]')).toThrow(/match/);
    expect(() => parseEnv({ PRICE_TABLE: 'families: [{ family: x, match: [x], input: -1, output: 1 }]' })).toThrow(
      /PRICE_TABLE: \/families\/0\/input/,
    );
    const problems: EnvProblem[] = [];
    expect(readPriceTable({ PRICE_TABLE: '{"families": []}' }, problems)).toEqual([]);
    expect(problems).toEqual([]);
  });
});

describe('money of a turn', () => {
  const p = { family: 't', match: ['t'], input: 3, cache_write: 3.75, cache_read: 0.3, output: 15 };

  it('bills each usage kind at its rate', () => {
    expect(billedUsd({ fresh: 1e6, cacheRead: 1e6, cacheWrite: 1e6, output: 1e6 }, p)).toBeCloseTo(3 + 0.3 + 3.75 + 15, 9);
  });

  it('removed prefix tokens are worth the cache-read rate on a turn that read its cache', () => {
    const v = savedUsd('anthropic', { prefix: 1e6, tail: 1e6 }, { fresh: 10, cacheRead: 500, cacheWrite: 20, output: 5 }, p);
    expect(v.prefixRate).toBe(0.3);
    expect(v.tailRate).toBe(3.75);
    expect(v.prefixUsd + v.tailUsd).toBeCloseTo(0.3 + 3.75, 9);
  });

  it('without a cache read or write everything removed is worth the fresh rate', () => {
    const v = savedUsd('anthropic', { prefix: 100, tail: 100 }, { fresh: 900, cacheRead: 0, cacheWrite: 0, output: 5 }, p);
    expect([v.prefixRate, v.tailRate]).toEqual([3, 3]);
  });

  it('OpenAI has no write premium: the tail is worth plain input even when the turn cached', () => {
    const v = savedUsd('openai', { prefix: 0, tail: 100 }, { fresh: 900, cacheRead: 1024, cacheWrite: 5, output: 5 }, p);
    expect(v.tailRate).toBe(3);
  });
});

describe('the model of an undecoded body', () => {
  it('is read from the first KiB, where SDKs and agents write it', () => {
    expect(headModel(Buffer.from('{"model": "claude-sonnet-4-6","messages":[]}'))).toBe('claude-sonnet-4-6');
    expect(headModel(Buffer.from(`{"messages":[{"role":"user","content":"${'x'.repeat(2000)}"}],"model":"gpt-4o"}`))).toBeUndefined();
  });
});
