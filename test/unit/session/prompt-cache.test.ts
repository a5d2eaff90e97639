// The simulated provider cache the e2e tests and the billing bench rely on: reads are the longest
// live prefix at a breakpoint (Anthropic) or any prefix (OpenAI), breakpoint placement is not part
// of the cache key, entries expire after their TTL, and the price table is applied exactly.
import type { Dialect } from '@context-guru/components';
import { countTokens } from '@context-guru/components';
import { toGeminiBody } from '../../../bench/gemini-body';
import { PromptCacheSim, canonical, headChanged, prefixBust, priceUsd, promptSegments } from '../../support/prompt-cache';

const MIN = 60_000;
const CC = { type: 'ephemeral' };

/** A tool output of roughly `n` hundred tokens, distinct per seed. */
const output = (seed: number, n = 6) =>
  Array.from({ length: n * 20 }, (_, i) => `line ${seed}.${i}: value=${(seed * 7919 + i * 104729) % 100003}`).join('\n');

function anthropicBody(
  turns: number,
  breakpointOnLast = true,
  system: unknown = [{ type: 'text', text: 'You are a coding agent.', cache_control: CC }],
) {
  const messages: Record<string, unknown>[] = [{ role: 'user', content: 'Fix the parser.' }];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${t}`, name: 'bash', input: { command: `step ${t}` } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${t}`, content: output(t) }] });
  }
  if (breakpointOnLast) {
    const last = messages[messages.length - 1]!;
    const blocks = last.content as Record<string, unknown>[] | string;
    if (Array.isArray(blocks)) blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: CC };
  }
  return { model: 'claude-sonnet-4-6', max_tokens: 1024, system, messages };
}

function openaiBody(turns: number) {
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Fix the parser.' },
  ];
  for (let t = 0; t < turns; t++) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `call_${t}`, type: 'function', function: { name: 'bash', arguments: '{}' } }],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${t}`, content: output(t) });
  }
  return { model: 'gpt-4o', messages };
}

const tokensOf = (dialect: Dialect, body: Record<string, unknown>, segments?: number) =>
  promptSegments(dialect, body)
    .slice(0, segments)
    .reduce((n, s) => n + s.tokens, 0);

describe('segments', () => {
  it('counts o200k tokens of each segment’s JSON without cache_control, in provider order', () => {
    const body = anthropicBody(1);
    const segs = promptSegments('anthropic', body);
    expect(segs.map((s) => s.kind)).toEqual(['system', 'message', 'message', 'message']);
    expect(segs[3]!.text).not.toContain('cache_control');
    expect(segs[3]!.tokens).toBe(countTokens(canonical(body.messages[2])));
    expect(segs[3]!.breakpointTtlMs).toBe(5 * MIN);
    expect(segs[1]!.breakpointTtlMs).toBeUndefined();
  });
});

describe('Anthropic', () => {
  it('no breakpoint: nothing is read or written', () => {
    const sim = new PromptCacheSim({ now: () => 0 });
    const body = anthropicBody(3, false, 'sys');
    sim.bill('k', 'anthropic', body);
    const b = sim.bill('k', 'anthropic', body);
    expect(b).toMatchObject({ cacheRead: 0, cacheWrite: 0, fresh: b.prompt });
  });

  it('a growing conversation reads the previous turn and writes only the new part (the moved breakpoint is free)', () => {
    let now = 0;
    const sim = new PromptCacheSim({ now: () => now });
    const first = sim.bill('k', 'anthropic', anthropicBody(3));
    expect(first).toMatchObject({ cacheRead: 0, cacheWrite: first.prompt, fresh: 0 });
    now += MIN;
    const body = anthropicBody(4);
    const second = sim.bill('k', 'anthropic', body);
    expect(second.cacheRead).toBe(first.prompt);
    expect(second.cacheWrite).toBe(second.prompt - first.prompt);
    // Another key shares nothing.
    expect(sim.bill('other', 'anthropic', body).cacheRead).toBe(0);
  });

  it('changing an early message reads only up to an earlier entry', () => {
    let now = 0;
    const sim = new PromptCacheSim({ now: () => now });
    const b3 = anthropicBody(3);
    const first = sim.bill('k', 'anthropic', b3);
    now += MIN;
    const changed = anthropicBody(4);
    ((changed.messages[2]!.content as Record<string, unknown>[])[0] as Record<string, unknown>).content = 'masked <<cg:0123456789abcdef>>';
    const busted = sim.bill('k', 'anthropic', changed);
    // Only the system entry (written on the first turn) is reachable; everything after is rewritten.
    expect(busted.cacheRead).toBe(0); // the system block alone is under the 1024-token minimum
    expect(busted.cacheWrite).toBe(busted.prompt);
    expect(first.cacheWrite).toBe(first.prompt);
  });

  it('entries expire after 5 min without a read, and 1 h when asked', () => {
    let now = 0;
    const sim = new PromptCacheSim({ now: () => now });
    sim.bill('k', 'anthropic', anthropicBody(3));
    now += 4 * MIN;
    expect(sim.bill('k', 'anthropic', anthropicBody(3)).cacheRead).toBeGreaterThan(0); // renews
    now += 4 * MIN;
    expect(sim.bill('k', 'anthropic', anthropicBody(3)).cacheRead).toBeGreaterThan(0);
    now += 5 * MIN + 1;
    expect(sim.bill('k', 'anthropic', anthropicBody(3)).cacheRead).toBe(0);

    const hour = { type: 'ephemeral', ttl: '1h' };
    const long = anthropicBody(3, false, [{ type: 'text', text: 'sys', cache_control: hour }]);
    const blocks = long.messages[long.messages.length - 1]!.content as Record<string, unknown>[];
    blocks[0] = { ...blocks[0], cache_control: hour };
    sim.bill('h', 'anthropic', long);
    now += 50 * MIN;
    expect(sim.bill('h', 'anthropic', long).cacheRead).toBe(tokensOf('anthropic', long));
  });
});

describe('OpenAI', () => {
  it('caches automatically, from 1024 tokens on, in 128-token steps', () => {
    let now = 0;
    const sim = new PromptCacheSim({ now: () => now });
    const small = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    sim.bill('k', 'openai', small);
    expect(sim.bill('k', 'openai', small).cacheRead).toBe(0);
    const b3 = openaiBody(3);
    const first = sim.bill('k', 'openai', b3);
    expect(first).toMatchObject({ cacheRead: 0, cacheWrite: 0, fresh: first.prompt });
    now += MIN;
    const second = sim.bill('k', 'openai', openaiBody(4));
    const prefix = tokensOf('openai', b3);
    expect(second.cacheRead).toBe(1024 + Math.floor((prefix - 1024) / 128) * 128);
    expect(second.cacheWrite).toBe(0);
    expect(second.fresh).toBe(second.prompt - second.cacheRead);
  });
});

describe('Gemini', () => {
  it('segments each declaration, systemInstruction and each content; reads the live prefix to the token, writes free', () => {
    let now = 0;
    const sim = new PromptCacheSim({ now: () => now });
    const tools = [
      { type: 'function', function: { name: 'bash', parameters: {} } },
      { type: 'function', function: { name: 'read', parameters: {} } },
    ];
    const b3 = toGeminiBody({ ...openaiBody(3), tools });
    expect(promptSegments('gemini', b3).map((s) => s.kind)).toEqual(['tool', 'tool', 'system', ...Array<string>(7).fill('message')]);
    const first = sim.bill('g', 'gemini', b3);
    expect(first).toMatchObject({ cacheRead: 0, cacheWrite: 0, fresh: first.prompt });
    now += MIN;
    const b4 = toGeminiBody({ ...openaiBody(4), tools });
    const second = sim.bill('g', 'gemini', b4);
    expect(second.cacheRead).toBe(tokensOf('gemini', b3));
    expect(second.cacheWrite).toBe(0);
    expect(prefixBust(b3, b4)).toBe(-1);
    const changed = { ...b4, contents: [...(b4.contents as unknown[])] };
    changed.contents[2] = { role: 'user', parts: [{ functionResponse: { name: 'bash', response: { output: 'x' } } }] };
    expect(prefixBust(b3, changed)).toBe(2);
    expect(headChanged('gemini', b3, { ...b4, systemInstruction: { parts: [{ text: 'other' }] } })).toBe(true);
    now += 6 * MIN;
    expect(sim.bill('g', 'gemini', b4).cacheRead).toBe(0);
  });
});

describe('price and bust helpers', () => {
  it('prices fresh 1×, write 1.25×, read 0.1×, output 5× of $3/MTok', () => {
    expect(priceUsd({ fresh: 1e6, cacheWrite: 0, cacheRead: 0, output: 0 })).toBeCloseTo(3, 10);
    expect(priceUsd({ fresh: 0, cacheWrite: 1e6, cacheRead: 1e6, output: 1e6 })).toBeCloseTo(3.75 + 0.3 + 15, 10);
  });

  it('prefixBust finds the first changed earlier message, ignoring breakpoints and compaction', () => {
    const a = anthropicBody(3);
    const b = anthropicBody(4, false);
    expect(prefixBust(a, b)).toBe(-1);
    const c = anthropicBody(4);
    (c.messages[4]!.content as Record<string, unknown>[])[0] = { type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' };
    expect(prefixBust(a, c)).toBe(4);
    expect(prefixBust(anthropicBody(4), anthropicBody(1))).toBe(-1);
    expect(headChanged('anthropic', a, b)).toBe(false);
    expect(headChanged('anthropic', a, { ...b, tools: [{ name: 'x', input_schema: {} }] })).toBe(true);
  });
});
