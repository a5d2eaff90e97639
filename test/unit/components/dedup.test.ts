// dedup keeps the first copy, points later byte-identical copies at it, and the marker it leaves
// always resolves to exactly the repeated text.
import { Pipeline, markerIds, type Message } from '@context-guru/components';
import { dedupComponent } from '../../../libs/components/src/offload/dedup.component';
import { testCtx, type TestCtxOptions } from '../../support/ctx';

const LOG = Array.from(
  { length: 30 },
  (_, i) => `2024-05-02T09:14:${String(i).padStart(2, '0')}Z INFO  worker-3 processed batch ${1000 + i} in ${40 + i}ms`,
).join('\n');

const tool = (content: string, id: string): Message => ({ role: 'tool', tool_call_id: id, content });

async function runDedup(messages: Message[], raw?: unknown, ctxOptions?: TestCtxOptions) {
  const ctx = testCtx(ctxOptions);
  const r = await new Pipeline([dedupComponent.create(dedupComponent.options(raw, 'components.dedup'))]).run(messages, ctx);
  return { messages: r.messages, report: r.reports[0]!, ctx };
}

describe('dedup', () => {
  it('keeps the first copy verbatim and stashes the original under the pointer marker', async () => {
    const { messages, report, ctx } = await runDedup([tool(LOG, 'a'), tool(LOG, 'b'), tool(LOG, 'c')]);
    expect(messages[0]!.content).toBe(LOG);
    const [second, third] = [messages[1]!.content as string, messages[2]!.content as string];
    expect(second).toMatch(/^\[identical to an earlier tool output\] <<cg:[0-9a-f]{16}>>$/);
    expect(third).toBe(second);
    const id = markerIds(second)[0]!;
    expect(ctx.stash.entries.get(id)).toBe(LOG);
    expect(report.gates).toEqual({ no_earlier_identical_output: 1 });
  });

  it('treats only byte-identical outputs as repeats', async () => {
    const { messages, report } = await runDedup([tool(LOG, 'a'), tool(`${LOG}\n`, 'b'), tool(LOG.replace('INFO ', 'INFO'), 'c')]);
    expect(messages.map((m) => m.content)).toEqual([LOG, `${LOG}\n`, LOG.replace('INFO ', 'INFO')]);
    expect(report.gates).toEqual({ no_earlier_identical_output: 3 });
  });

  it('ignores identical non-tool messages', async () => {
    const user: Message = { role: 'user', content: LOG };
    const { messages } = await runDedup([user, tool(LOG, 'a')]);
    expect(messages[1]!.content).toBe(LOG);
  });

  it('writes the bare pointer in marker_mode off and marks the run irreversible', async () => {
    const { messages, report, ctx } = await runDedup([tool(LOG, 'a'), tool(LOG, 'b')], { marker_mode: 'off' });
    expect(messages[1]!.content).toBe('[identical to an earlier tool output]');
    expect(report.irreversible).toBe(true);
    expect(ctx.stash.entries.size).toBe(0);
  });

  it('never emits a marker when the stash cannot persist', async () => {
    const { messages, report } = await runDedup([tool(LOG, 'a'), tool(LOG, 'b')], undefined, { persistent: false });
    expect(messages[1]!.content).toBe('[identical to an earlier tool output]');
    expect(report.keys).toEqual([]);
    expect(report.reverted).toBe(false);
  });
});
