// cacheinject through the Anthropic wire: in the common agent turn the message before the newest
// turn is an assistant message holding only a tool_use block, and the breakpoint belongs on that
// block — not far back on the last message that happens to have text.
import { buildPipeline } from '@context-guru/components';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { testCtx } from '../../support/ctx';

const body = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'The nightly export job fails with a permissions error.' }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking the directory.' },
        { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls -l /var/exports' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'drwxr-x--- 2 root root 4096 2026-11-30' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'id exporter' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'uid=998(exporter) gid=998(exporter)' }] },
  ],
};

async function forwarded(raw: string) {
  const view = decodeRequest('anthropic', raw);
  const { pipeline } = buildPipeline({ pipeline: ['cacheinject'] });
  const result = await pipeline.run(view.messages, testCtx({ provider: 'anthropic' }));
  return JSON.parse(encodeRequest(view, result.messages, { injectExpand: false }).raw) as typeof body;
}

describe('cacheinject on the Anthropic wire', () => {
  it('puts the breakpoint on the tool_use block of a tool_use-only assistant message before the newest turn', async () => {
    const out = await forwarded(JSON.stringify(body));
    expect(out.messages[3]!.content[0]).toEqual({
      type: 'tool_use',
      id: 'toolu_2',
      name: 'bash',
      input: { command: 'id exporter' },
      cache_control: { type: 'ephemeral' },
    });
    // Exactly one breakpoint, and nothing else moved.
    expect(JSON.stringify(out).match(/cache_control/g)).toHaveLength(1);
    expect(validateProviderShape('anthropic', out)).toEqual([]);
  });

  it('puts it on the trailing tool_use, the last block on the wire, when text precedes it', async () => {
    const two = { ...body, messages: body.messages.slice(0, 3) };
    const out = await forwarded(JSON.stringify(two));
    expect((out.messages[1]!.content[1] as { cache_control?: unknown }).cache_control).toEqual({ type: 'ephemeral' });
    expect(JSON.stringify(out).match(/cache_control/g)).toHaveLength(1);
  });

  it('sees a breakpoint the client already put on a tool_use block and adds none', async () => {
    const own = JSON.parse(JSON.stringify(body)) as typeof body;
    (own.messages[3]!.content[0] as Record<string, unknown>).cache_control = { type: 'ephemeral' };
    const raw = JSON.stringify(own);
    expect(JSON.stringify(await forwarded(raw))).toBe(raw);
  });
});
