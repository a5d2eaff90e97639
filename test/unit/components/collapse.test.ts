// collapse keeps an exact head/tail window, names exactly how many lines it hid, and freezes the
// decision so a later turn reproduces the same bytes even inside the cached prefix.
import { Pipeline, contentKey, countTokens, markerIds, type Message } from '@context-guru/components';
import { collapseComponent, collapseText } from '../../../libs/components/src/offload/collapse.component';
import { testCtx, type TestCtxOptions } from '../../support/ctx';

const lines = (n: number) =>
  Array.from({ length: n }, (_, i) => `[build] step ${i + 1}/${n}: compiling module_${i + 1}.c -> module_${i + 1}.o`);
const tool = (content: string): Message => ({ role: 'tool', tool_call_id: 'call_1', content });

async function runCollapse(messages: Message[], raw: unknown, ctxOptions?: TestCtxOptions) {
  const ctx = testCtx(ctxOptions);
  const r = await new Pipeline([collapseComponent.create(collapseComponent.options(raw, 'components.collapse'))]).run(messages, ctx);
  return { messages: r.messages, report: r.reports[0]!, ctx };
}

describe('collapse', () => {
  it('keeps exactly head_lines and tail_lines and counts the omitted lines exactly', async () => {
    const src = lines(100);
    const { messages, ctx } = await runCollapse([tool(src.join('\n'))], { max_tokens: 100 });
    const out = (messages[0]!.content as string).split('\n');
    expect(out).toHaveLength(41);
    expect(out.slice(0, 20)).toEqual(src.slice(0, 20));
    expect(out.slice(21)).toEqual(src.slice(80));
    expect(out[20]).toMatch(/^\.\.\. \(60 lines omitted\) <<cg:[0-9a-f]{16}>> \[full output: call context_guru_expand\]$/);
    expect(ctx.stash.entries.get(markerIds(out[20]!)[0]!)).toBe(src.join('\n'));
  });

  it('treats a final newline as a terminator, not an extra line', () => {
    const text = `${lines(50).join('\n')}\n`;
    const out = collapseText(text, 10, 10, '')!;
    expect(out).toContain('... (30 lines omitted)');
    expect(out.endsWith(`${lines(50)[49]}\n`)).toBe(true);
  });

  it('supports an empty head window', () => {
    const out = collapseText(lines(10).join('\n'), 0, 2, 'TOKEN')!;
    expect(out.split('\n')).toEqual(['... (8 lines omitted) TOKEN', ...lines(10).slice(8)]);
  });

  it('leaves outputs with no more lines than head + tail, and outputs at exactly max_tokens', async () => {
    const { report } = await runCollapse([tool(lines(40).join('\n'))], { max_tokens: 10 });
    expect(report.gates).toEqual({ too_few_lines: 1 });
    const text = lines(60).join('\n');
    const atLimit = await runCollapse([tool(text)], { max_tokens: countTokens(text) });
    expect(atLimit.report.gates).toEqual({ below_max_tokens: 1 });
    expect(atLimit.messages[0]!.content).toBe(text);
  });

  it('freezes its decision and replays it byte-identically on a later cache-warm turn', async () => {
    const text = lines(120).join('\n');
    const turn1 = await runCollapse([tool(text)], { max_tokens: 100 });
    const slot = `collapse:${contentKey(text)}`;
    expect(turn1.ctx.state.newFrozen.get(slot)).toBe(turn1.messages[0]!.content);
    // A later turn with a different window: the cached prefix must still see turn 1's bytes.
    const turn2 = await runCollapse(
      [tool(text)],
      { max_tokens: 100, head_lines: 5, tail_lines: 5 },
      {
        cache: { aware: true, maxCachedIdx: 3 },
        snapshot: { frozen: new Map(turn1.ctx.state.newFrozen) },
      },
    );
    expect(turn2.messages[0]!.content).toBe(turn1.messages[0]!.content);
    expect(turn2.report.keys).toHaveLength(1);
    expect(turn2.ctx.stash.entries.get(turn2.report.keys[0]!)).toBe(text);
  });

  it('degrades to a marker-free window when the stash cannot persist', async () => {
    const { messages, report } = await runCollapse([tool(lines(100).join('\n'))], { max_tokens: 100 }, { persistent: false });
    expect(messages[0]!.content).toContain('... (60 lines omitted)\n');
    expect(markerIds(messages[0]!.content as string)).toEqual([]);
    expect(report.irreversible).toBe(true);
  });

  it('decodes the documented defaults', () => {
    expect(collapseComponent.options(undefined, 'x')).toEqual({
      max_tokens: 2000,
      head_lines: 20,
      tail_lines: 20,
      marker_mode: 'full',
      cold_cache: false,
    });
  });
});
