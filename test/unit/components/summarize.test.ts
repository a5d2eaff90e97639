import { Pipeline, buildPipeline, type Message } from '@context-guru/components';
import { summarizeComponent } from '../../../libs/components/src/offload/summarize.component';
import { testCtx } from '../../support/ctx';

const options = (raw?: unknown) => summarizeComponent.options(raw, 'components.summarize') as { trigger: { min_messages: number } };

const long: Message[] = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Port the billing module to the new ledger API.' },
  ...Array.from({ length: 30 }, (_, i): Message => ({ role: i % 2 ? 'assistant' : 'user', content: `step ${i}: ${'context '.repeat(80)}` })),
];

describe('summarize', () => {
  it('decodes the full option schema with the seed defaults', () => {
    expect(options(undefined)).toEqual({
      summary_level: 'regular',
      keep_last: 3,
      min_tokens: 500,
      resummarize_tokens: 6000,
      include_tool_calls: false,
      model: { source: 'incoming' },
      trigger: { min_request_tokens: 0, min_messages: 0 },
      marker_mode: 'full',
    });
  });

  it('folds the legacy start_from_message into trigger.min_messages unless that is set', () => {
    expect(options({ start_from_message: 6 }).trigger.min_messages).toBe(6);
    expect(options({ start_from_message: 6, trigger: { min_messages: 10 } }).trigger.min_messages).toBe(10);
  });

  it('rejects typos and bad values naming the key', () => {
    expect(() => options({ summary_level: 'brief' })).toThrow('components.summarize.summary_level');
    expect(() => options({ model: { source: 'config', modle: 'x' } })).toThrow('components.summarize.model.modle');
    expect(() => options({ keep_lst: 2 })).toThrow('components.summarize.keep_lst');
  });

  it('is a recorded no-op on every run: skipped, gate no_model, messages untouched', async () => {
    const component = summarizeComponent.create(options({ trigger: { min_messages: 4 } }));
    const pipeline = new Pipeline([component]);
    for (let turn = 0; turn < 2; turn++) {
      const result = await pipeline.run(long, testCtx());
      const report = result.reports[0]!;
      expect(report).toMatchObject({ skipped: true, reverted: false, gates: { no_model: 1 }, changed: [] });
      expect(result.messages).toEqual(long);
    }
  });

  it('builds as the summarize preset', () => {
    expect(buildPipeline({ preset: 'summarize' }).names).toEqual(['summarize']);
  });
});
