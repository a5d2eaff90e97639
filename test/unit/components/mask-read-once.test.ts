// mask's read_min_tokens: a large output the model has already answered is masked even among the
// newest keep_recent; one it has not read yet, or a small one, stays. Inside the cached prefix it
// is only proposed (ctx.depth), over the message as it stood, and stays a gate without pricing.
import { Pipeline, buildPipeline, cloneMessage, type Message } from '@context-guru/components';
import { maskComponent } from '../../../libs/components/src/offload/mask.component';
import { testCtx, type TestCtx } from '../../support/ctx';

const big = (tag: string) => Array.from({ length: 400 }, (_, i) => `${tag} line ${i}: value=${i * 7}`).join('\n');
const call = (id: string): Message => ({ role: 'assistant', content: '', tool_calls: [{ id, name: 'bash', arguments: '{}' }] });
const out = (id: string, content: string): Message => ({ role: 'tool', tool_call_id: id, content });

/** task, call a, big output a (answered by call b), call b, output b (not read yet). */
const transcript = (): Message[] => [{ role: 'user', content: 'task' }, call('a'), out('a', big('a')), call('b'), out('b', big('b'))];

async function mask(messages: Message[], ctx: TestCtx, raw: Record<string, unknown> = { read_min_tokens: 300 }) {
  const r = await new Pipeline([maskComponent.create(maskComponent.options(raw, 'components.mask'))]).run(messages, ctx);
  return { messages: r.messages, gates: r.reports[0]!.gates };
}

describe('mask read_min_tokens', () => {
  it('masks a large output the model answered, never the one it has not read', async () => {
    const { messages } = await mask(transcript(), testCtx());
    expect(messages[2]!.content).toMatch(/^\[older tool output masked; starts: a line 0/);
    expect(messages[4]!.content).toBe(big('b'));
  });

  it('leaves a read output below read_min_tokens, and does nothing when off (the default)', async () => {
    expect((await mask(transcript(), testCtx(), { read_min_tokens: 100_000 })).messages[2]!.content).toBe(big('a'));
    expect((await mask(transcript(), testCtx(), {})).messages[2]!.content).toBe(big('a'));
  });

  it('inside the cached prefix, proposes the change over the message as it stood, or gates it', async () => {
    const proposed = new Map<number, Message>();
    const ctx = {
      ...testCtx({ cache: { aware: true, maxCachedIdx: 2 } }),
      depth: { propose: (i: number, m: Message) => !!proposed.set(i, cloneMessage(m)) },
    };
    const { messages } = await mask(transcript(), ctx);
    expect([...proposed.keys()]).toEqual([2]);
    expect(proposed.get(2)!.content).toBe(big('a'));
    expect(messages[2]!.content).toMatch(/^\[older tool output masked/);
    const gated = await mask(transcript(), testCtx({ cache: { aware: true, maxCachedIdx: 2 } }));
    expect(gated.messages[2]!.content).toBe(big('a'));
    expect(gated.gates.cached_prefix).toBe(1);
  });

  it('presets auto and agent turn it on; a config block overrides the preset key by key', async () => {
    const built = (cfg: Parameters<typeof buildPipeline>[0]) => buildPipeline(cfg).pipeline;
    expect(built({ preset: 'auto' }).components.map((c) => c.name)).toEqual([
      'format',
      'dedup',
      'failed_run',
      'cmdfilter',
      'mask',
      'cacheinject',
    ]);
    const masked = async (cfg: Parameters<typeof buildPipeline>[0]) => {
      const maskOnly = new Pipeline(built(cfg).components.filter((c) => c.name === 'mask'));
      return (await maskOnly.run(transcript(), testCtx())).messages[2]!.content !== big('a');
    };
    expect(await masked({ preset: 'auto' })).toBe(true);
    expect(await masked({ preset: 'auto', components: { mask: { keep_head_chars: 0 } } })).toBe(true);
    expect(await masked({ preset: 'auto', components: { mask: { read_min_tokens: 0 } } })).toBe(false);
    expect(await masked({ preset: 'agent' })).toBe(true);
    // The seed's mask alone (no preset options): by age only.
    expect(await masked({ pipeline: ['mask'] })).toBe(false);
    expect(() => built({ preset: 'auto', components: { mask: { read_min_tokens: -1 } } })).toThrow(/read_min_tokens/);
  });
});
