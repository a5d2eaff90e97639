import type { Message } from '@context-guru/components';
import { guardCachedPrefix, rewrittenIndices } from '../../../libs/engine/src/session/cache-guard';

const msgs = (): Message[] => [
  { role: 'user', content: 'task' },
  { role: 'tool', tool_call_id: 'a', content: 'output A' },
  { role: 'tool', tool_call_id: 'b', content: 'output B' },
  { role: 'tool', tool_call_id: 'c', content: 'output C' },
];
const warm = { aware: true, maxCachedIdx: 2, cold: false };
const prev = (rewritten: number[]) => ({ n: 3, at: 1, ttlMs: 300_000, rewritten });

describe('the cache guard', () => {
  it('reverts a change inside the cached prefix that the previous turn did not make', () => {
    const input = msgs();
    const output = msgs();
    output[2]!.content = '<<cg:0123456789abcdef>>';
    expect(guardCachedPrefix(input, output, warm, prev([]))).toEqual([2]);
    expect(output[2]!.content).toBe('output B');
  });

  it('keeps a replayed change the previous turn also forwarded, and any change in the tail', () => {
    const input = msgs();
    const output = msgs();
    output[1]!.content = 'masked A';
    output[3]!.content = 'masked C';
    expect(guardCachedPrefix(input, output, warm, prev([1]))).toEqual([]);
    expect(output[1]!.content).toBe('masked A');
    expect(output[3]!.content).toBe('masked C');
  });

  it('stands aside on a cold turn, without a previous record, and when not cache-aware', () => {
    for (const [cache, p] of [
      [{ ...warm, cold: true }, prev([])],
      [warm, null],
      [{ ...warm, aware: false }, prev([])],
      [warm, { n: 3, at: 1, ttlMs: 1 }],
    ] as const) {
      const output = msgs();
      output[1]!.content = 'changed';
      expect(guardCachedPrefix(msgs(), output, cache, p)).toEqual([]);
      expect(output[1]!.content).toBe('changed');
    }
  });

  it('reports the forwarded rewrites, leaving out what the wire discarded', () => {
    const input = msgs();
    const output = msgs();
    output[1]!.content = 'x';
    output[3]!.content = 'y';
    expect(rewrittenIndices(input, output, [3])).toEqual([1]);
  });

  it('lets a breakpoint through at depth: cache_control does not change what the provider cached', () => {
    const input: Message[] = [...msgs(), { role: 'user', content: [{ type: 'text', text: 'go on' }] }];
    const output = input.map((m) => ({ ...m }));
    output[4] = { role: 'user', content: [{ type: 'text', text: 'go on', cache_control: { type: 'ephemeral' } }] };
    expect(guardCachedPrefix(input, output, { aware: true, maxCachedIdx: 4, cold: false }, prev([]))).toEqual([]);
    expect(output[4]!.content).toEqual([{ type: 'text', text: 'go on', cache_control: { type: 'ephemeral' } }]);
    expect(rewrittenIndices(input, output, [])).toEqual([]);
  });
});
