// The provider-cache view of a turn: the boundary is the previous turn's message count, a shorter
// transcript resets it, cold needs a recorded turn idle for at least the (widened) TTL + 60 s, and
// the TTL a request asks for is read from structural breakpoints only.
import type { TurnRecord } from '@context-guru/components';
import { cacheViewFor, isCacheAware, requestTtlMs } from '../../../libs/engine/src/session/cache-view';

const MIN = 60_000;
const T0 = 1_700_000_000_000;
const prev = (n: number, at = T0, ttlMs = 5 * MIN): TurnRecord => ({ n, at, ttlMs });

describe('isCacheAware', () => {
  it('auto and on are cache-aware for both dialects we front; off is not', () => {
    expect(isCacheAware('auto')).toBe(true);
    expect(isCacheAware('on')).toBe(true);
    expect(isCacheAware('off')).toBe(false);
  });
});

describe('cacheViewFor — boundary', () => {
  it('a first turn (no record) has nothing cached and reads warm', () => {
    const t = cacheViewFor(null, 40, true, T0 + 10 * 3600_000, 5 * MIN);
    expect(t.view).toEqual({ aware: true, maxCachedIdx: -1, cold: false });
    expect(t.compactionReset).toBe(false);
  });

  it('the previous turn’s messages are the cached prefix', () => {
    expect(cacheViewFor(prev(12), 14, true, T0 + MIN, 5 * MIN).view.maxCachedIdx).toBe(11);
    // Same length again (a retry): everything is cached.
    expect(cacheViewFor(prev(12), 12, true, T0 + MIN, 5 * MIN).view.maxCachedIdx).toBe(11);
  });

  it('a shorter transcript is an agent compaction: the boundary resets to nothing cached', () => {
    const t = cacheViewFor(prev(50), 9, true, T0 + MIN, 5 * MIN);
    expect(t.view.maxCachedIdx).toBe(-1);
    expect(t.compactionReset).toBe(true);
  });

  it('not cache-aware: no boundary at all', () => {
    expect(cacheViewFor(prev(12), 14, false, T0 + MIN, 5 * MIN).view).toEqual({ aware: false, maxCachedIdx: -1, cold: false });
  });
});

describe('cacheViewFor — cold', () => {
  it('cold exactly from TTL + 60 s of idle on', () => {
    expect(cacheViewFor(prev(10), 12, true, T0 + 6 * MIN - 1, 5 * MIN).view.cold).toBe(false);
    expect(cacheViewFor(prev(10), 12, true, T0 + 6 * MIN, 5 * MIN).view.cold).toBe(true);
  });

  it('the TTL is widened monotonically: a session that once asked for 1 h waits 61 min', () => {
    const once1h = prev(10, T0, 60 * MIN);
    const t = cacheViewFor(once1h, 12, true, T0 + 30 * MIN, 5 * MIN);
    expect(t.view.cold).toBe(false);
    expect(t.ttlMs).toBe(60 * MIN);
    expect(cacheViewFor(once1h, 12, true, T0 + 61 * MIN, 5 * MIN).view.cold).toBe(true);
    // This request asking for 1 h widens a 5-min session too.
    expect(cacheViewFor(prev(10), 12, true, T0 + 30 * MIN, 60 * MIN).view.cold).toBe(false);
  });

  it('no recorded time, or a clock that went backwards, reads warm', () => {
    expect(cacheViewFor(prev(10, 0), 12, true, T0, 5 * MIN).view.cold).toBe(false);
    expect(cacheViewFor(prev(10, T0), 12, true, T0 - 10 * MIN, 5 * MIN).view.cold).toBe(false);
  });

  it('keeps the boundary on a cold turn (components decide whether cold lifts their gate)', () => {
    expect(cacheViewFor(prev(10), 12, true, T0 + 10 * MIN, 5 * MIN).view).toEqual({ aware: true, maxCachedIdx: 9, cold: true });
  });
});

describe('requestTtlMs', () => {
  const anth = (body: Record<string, unknown>) => {
    const raw = JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 10, ...body });
    return requestTtlMs('anthropic', JSON.parse(raw), raw.includes('1h'));
  };
  const user = (content: unknown) => ({ messages: [{ role: 'user', content }] });

  it('Anthropic defaults to 5 min; OpenAI caches for up to 1 h', () => {
    expect(anth(user('hi'))).toBe(5 * MIN);
    expect(requestTtlMs('openai', { messages: [] }, false)).toBe(60 * MIN);
  });

  it('any structural 1 h breakpoint asks for 1 h: system, tools, block, tool_result part', () => {
    const cc = { type: 'ephemeral', ttl: '1h' };
    expect(anth({ system: [{ type: 'text', text: 'sys', cache_control: cc }], ...user('hi') })).toBe(60 * MIN);
    expect(anth({ tools: [{ name: 't', input_schema: { type: 'object' }, cache_control: cc }], ...user('hi') })).toBe(60 * MIN);
    expect(anth(user([{ type: 'text', text: 'hi', cache_control: cc }]))).toBe(60 * MIN);
    expect(anth(user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'out', cache_control: cc }] }]))).toBe(
      60 * MIN,
    );
    expect(anth(user([{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '5m' } }]))).toBe(5 * MIN);
  });

  it('a "ttl": "1h" that is not a breakpoint does not stretch the TTL', () => {
    // A tool call's input and a tool's schema are JSON too: only cache_control counts.
    const setKey = { name: 'cache_set', input_schema: { type: 'object', properties: { ttl: { type: 'string' } } } };
    const call = {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'cache_set', input: { key: 'session', ttl: '1h' } }],
    };
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'config: {"ttl": "1h"}' }] };
    expect(anth({ tools: [setKey], messages: [{ role: 'user', content: 'cache it' }, call, result] })).toBe(5 * MIN);
  });
});
