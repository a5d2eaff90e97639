import { Pipeline, SUMMARY_SENTINEL, stashId, type Message } from '@context-guru/components';
import { crushedText, smartcrushComponent } from '../../../libs/components/src/offload/smartcrush.component';
import { arrayItemSpans } from '../../../libs/components/src/shared/json-scan';
import { testCtx } from '../../support/ctx';

const make = (raw?: unknown) => smartcrushComponent.create(smartcrushComponent.options(raw, 'components.smartcrush'));
const tool = (content: string): Message => ({ role: 'tool', tool_call_id: 'call_1', content });

/** A search API page whose items are written the way real servers write them (odd spacing, escapes). */
function searchHits(n: number): string {
  const items = Array.from({ length: n }, (_, i) => {
    const title = i === 7 ? 'Webhook delivery ERROR: 502 from upstream' : `Settlement report for merchant m_${1000 + i}`;
    return `{"id": ${4100 + i}, "score": ${i === 0 ? '1.0' : '0.8e0'}, "title": "${title}", "path": "reports\\/2025\\/03\\/r${i}.csv", "owner": "caf\\u00e9-ops"}`;
  });
  return `[\n  ${items.join(',\n  ')}\n]\n`;
}

describe('smartcrush', () => {
  it('keeps items as the exact bytes the tool sent, never re-serialized', async () => {
    const text = searchHits(20);
    const result = await new Pipeline([make({ min_tokens: 0 })]).run([tool(text)], testCtx());
    const out = result.messages[0]!.content as string;
    const spans = arrayItemSpans(text)!;
    const raw = (i: number) => text.slice(spans[i]![0], spans[i]![1]);
    const kept = [0, 1, 2, 7, 18, 19].map(raw);
    expect(out).toBe(`[${kept.join(',')}] [6 of 20 items shown; full array: call context_guru_expand] <<cg:${stashId(text)}>>`);
    expect(out).toContain('"score": 1.0');
    expect(out).toContain('caf\\u00e9-ops');
  });

  it('finds top-level items across nesting, strings with brackets and escaped quotes', () => {
    const text = ' [ {"a":[1,{"b":"],["}]} , "x\\",y" ,3.5e2,null, [ [] ] ,{"q":"\\\\"}] ';
    const spans = arrayItemSpans(text)!;
    expect(spans.map(([s, e]) => text.slice(s, e))).toEqual([
      '{"a":[1,{"b":"],["}]}',
      '"x\\",y"',
      '3.5e2',
      'null',
      '[ [] ]',
      '{"q":"\\\\"}',
    ]);
    expect(arrayItemSpans('[]')).toEqual([]);
    expect(arrayItemSpans('{"items":[]}')).toBeNull();
  });

  it('keeps every item that carries an error signal, in any case', async () => {
    const items = Array.from({ length: 12 }, (_, i) => ({
      job: `nightly-${i}`,
      status: i === 5 ? 'FATAL' : i === 8 ? 'Traceback in worker' : 'ok',
    }));
    const text = JSON.stringify(items, null, 2);
    const result = await new Pipeline([make({ min_tokens: 0 })]).run([tool(text)], testCtx());
    const out = result.messages[0]!.content as string;
    const shown = JSON.parse(out.slice(0, out.indexOf('] [') + 1)) as Array<{ job: string }>;
    expect(shown.map((x) => x.job)).toEqual(['nightly-0', 'nightly-1', 'nightly-2', 'nightly-5', 'nightly-8', 'nightly-10', 'nightly-11']);
  });

  it('writes the count note without a marker in summary and off modes', () => {
    expect(crushedText(['1', '2'], 9, SUMMARY_SENTINEL)).toBe(`[1,2] [2 of 9 items shown] ${SUMMARY_SENTINEL}`);
    expect(crushedText(['1', '2'], 9, '')).toBe('[1,2] [2 of 9 items shown]');
  });

  it('degrades to the unmarked note when the store cannot keep the original', async () => {
    const ctx = testCtx({ persistent: false });
    const result = await new Pipeline([make({ min_tokens: 0 })]).run([tool(searchHits(20))], ctx);
    const out = result.messages[0]!.content as string;
    expect(out.endsWith('[6 of 20 items shown]')).toBe(true);
    expect(result.reports[0]!.irreversible).toBe(true);
    expect(ctx.stash.entries.size).toBe(0);
  });

  it('has nothing to drop when keep_first + keep_last cover the array', async () => {
    const result = await new Pipeline([make({ min_tokens: 0, keep_first: 10, keep_last: 10 })]).run([tool(searchHits(20))], testCtx());
    expect(result.reports[0]!.gates).toEqual({ nothing_to_drop: 1 });
  });

  it('is a pure function of the content: the same array crushes to the same bytes at any depth', async () => {
    const messages = [tool(searchHits(20)), { role: 'user', content: 'next' } as Message, tool(searchHits(20))];
    const deep = testCtx({ cache: { aware: true, maxCachedIdx: 2, cold: false } });
    const result = await new Pipeline([make({ min_tokens: 0 })]).run(messages, deep);
    expect(result.messages[0]!.content).toBe(result.messages[2]!.content);
    expect(result.reports[0]!.keys).toHaveLength(2);
  });
});
