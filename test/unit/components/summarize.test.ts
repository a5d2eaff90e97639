// summarize against a scripted model over HTTP: one user-role summary after the task, grounded in
// it; a per-session checkpoint replayed byte-identically (no model call) until the un-summarized
// part passes resummarize_tokens; a roll-forward that reads only what is new; every no-op gated.
import { Pipeline, buildPipeline, frozenSlot, type Message } from '@context-guru/components';
import { summarizeComponent } from '../../../libs/components/src/offload/summarize.component';
import { SUMMARY_CHECKPOINT_KEY, readCheckpoint } from '../../../libs/components/src/offload/summarize/checkpoint';
import { MASKED } from '../../../libs/components/src/offload/summarize/summary-prompt';
import { parseModelEnv } from '../../../apps/gateway/src/model/model-env';
import { createModelRuntime, createModelSources } from '../../../apps/gateway/src/model/model-resolver';
import { decodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { startFakeModel, type FakeModelServer, type ModelScript } from '../../support/fake-model-server';
import { testCtx, type TestCtxOptions } from '../../support/ctx';
import { agentSteps, anthropicTurn, openaiTurn, TASK } from '../../support/transcripts';

const STEPS = agentSteps(24, 5);
const SUMMARY = 'Read the parser and HTTP client sources; pytest shows 2 failures in tests/test_module_0.py (off-by-one in parse()).';
const turn = (upto: number): Message[] => decodeRequest('openai', JSON.stringify(openaiTurn(STEPS, upto))).messages;
const make = (raw: Record<string, unknown> = {}) =>
  summarizeComponent.create(summarizeComponent.options({ model: { source: 'config' }, ...raw }, 'components.summarize'));

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeModel(() => ({ text: `<summary>${SUMMARY}</summary>` }));
});
afterAll(() => model.close());
beforeEach(() => {
  model.calls.length = 0;
  model.setScript(() => ({ text: `<summary>${SUMMARY}</summary>` }));
});

function ctxWith(o: TestCtxOptions = {}, script?: ModelScript) {
  if (script) model.setScript(script);
  const env = parseModelEnv({ CHEAP_MODEL: 'claude-haiku-4-5', CHEAP_MODEL_BASE: model.url, CHEAP_MODEL_KEY: 'k' });
  const rt = createModelRuntime(env);
  return {
    ctx: {
      ...testCtx(o),
      models: createModelSources(env, { dialect: 'openai', model: undefined, upstreamBase: model.url, headers: {} }, rt),
    },
    rt,
  };
}

const options = (raw?: unknown) => summarizeComponent.options(raw, 'components.summarize') as { trigger: { min_messages: number } };

describe('summarize options', () => {
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

  it('builds as the summarize preset', () => {
    expect(buildPipeline({ preset: 'summarize' }).names).toEqual(['summarize']);
  });
});

const isSummary = (m: Message | undefined) =>
  m?.role === 'user' && typeof m.content === 'string' && m.content.startsWith('=== History Summary ===');

describe('summarize', () => {
  it('replaces the middle with one user-role summary after the task, grounded in the task, and stashes the span', async () => {
    const input = turn(12);
    const { ctx, rt } = ctxWith();
    const res = await new Pipeline([make()]).run(input, ctx);
    const report = res.reports[0]!;
    expect(report.error).toBeUndefined();
    expect(res.messages.slice(0, 2)).toEqual(input.slice(0, 2));
    expect(isSummary(res.messages[2])).toBe(true);
    expect(res.messages[3]!.role).toBe('assistant');
    // At least keep_last (3) messages survive after the summary, unchanged.
    const tail = res.messages.slice(3);
    expect(tail.length).toBeGreaterThanOrEqual(3);
    expect(tail).toEqual(input.slice(input.length - tail.length));
    const text = res.messages[2]!.content as string;
    expect(text).toContain(SUMMARY);
    expect(text).toContain(`<<cg:${report.keys[0]}>> [full earlier trajectory: call context_guru_expand]`);
    const stashed = JSON.parse(ctx.stash.entries.get(report.keys[0]!)!) as Message[];
    expect(stashed).toEqual(input.slice(2, input.length - tail.length));
    // The summarizer saw the task and the calls, not the tool outputs.
    const prompt = model.calls[0]!.prompt;
    expect(prompt).toContain(TASK);
    expect(prompt).toContain(`[tool call ${STEPS[0]!.tool}]`);
    expect(prompt).toContain(MASKED);
    expect(prompt).not.toContain(STEPS[0]!.output.slice(0, 200));
    expect(rt.spend.snapshot().llm_by_component.summarize.llm_calls).toBe(1);
    expect(res.tokensAfter).toBeLessThan(res.tokensBefore / 2);
  });

  it('shows tool outputs to the summarizer with include_tool_calls', async () => {
    await new Pipeline([make({ include_tool_calls: true })]).run(turn(6), ctxWith().ctx);
    expect(model.calls[0]!.prompt).toContain(STEPS[0]!.output.slice(0, 200));
    expect(model.calls[0]!.prompt).not.toContain(MASKED);
  });

  it('replays the checkpoint byte-identically on later turns, with no model call, until the tail grows', async () => {
    const first = ctxWith();
    const t1 = await new Pipeline([make()]).run(turn(12), first.ctx);
    const cp = readCheckpoint(first.ctx.state)!;
    expect(first.ctx.state.newFrozen.has(frozenSlot('summarize', SUMMARY_CHECKPOINT_KEY))).toBe(true);
    const second = ctxWith({ snapshot: { frozen: first.ctx.state.newFrozen } }, () => ({ status: 500, body: 'must not be called' }));
    const t2 = await new Pipeline([make()]).run(turn(13), second.ctx);
    expect(model.calls).toHaveLength(1);
    expect(t2.messages[2]).toEqual(t1.messages[2]);
    expect(t2.messages.slice(0, 3)).toEqual(t1.messages.slice(0, 3));
    expect(second.ctx.stash.entries.get(t2.reports[0]!.keys[0]!)).toBe(first.ctx.stash.entries.get(t1.reports[0]!.keys[0]!));
    expect(second.ctx.state.hits).toBe(1);
    expect(readCheckpoint(second.ctx.state)).toEqual(cp);
  });

  it('rolls forward past resummarize_tokens, reading only the new part plus the previous summary', async () => {
    const first = ctxWith();
    await new Pipeline([make({ resummarize_tokens: 400 })]).run(turn(8), first.ctx);
    const covered = readCheckpoint(first.ctx.state)!.count;
    model.setScript(() => ({ text: '<summary>Updated: parser fixed, one HTTP client test left.</summary>' }));
    const second = ctxWith({ snapshot: { frozen: first.ctx.state.newFrozen } });
    const t2 = await new Pipeline([make({ resummarize_tokens: 400 })]).run(turn(16), second.ctx);
    expect(model.calls).toHaveLength(2);
    const prompt = model.calls[1]!.prompt;
    expect(prompt).toContain(`## Summary of the session before this trajectory\n${SUMMARY}`);
    // Only the exchanges after the covered span are re-read.
    const readCalls = prompt.split('[tool call ').length - 1;
    const cp = readCheckpoint(second.ctx.state)!;
    expect(readCalls).toBe((cp.count - covered) / 2);
    expect(cp.count).toBeGreaterThan(covered);
    expect(t2.messages[2]!.content).toContain('Updated: parser fixed');
    // The stash still restores the whole span, from the first assistant turn on.
    expect(JSON.parse(second.ctx.stash.entries.get(t2.reports[0]!.keys[0]!)!)).toHaveLength(cp.count);
  });

  it('keeps the previous checkpoint when the roll-forward call fails', async () => {
    const first = ctxWith();
    const t1 = await new Pipeline([make({ resummarize_tokens: 400 })]).run(turn(8), first.ctx);
    const second = ctxWith({ snapshot: { frozen: first.ctx.state.newFrozen } }, () => ({ status: 529, body: '{}' }));
    const t2 = await new Pipeline([make({ resummarize_tokens: 400 })]).run(turn(16), second.ctx);
    expect(t2.reports[0]!.gates).toEqual({ model_call_failed: 1 });
    expect(t2.messages[2]).toEqual(t1.messages[2]);
  });

  it('summarizes a rewritten history afresh instead of replaying a summary of something else', async () => {
    const first = ctxWith();
    await new Pipeline([make()]).run(turn(12), first.ctx);
    const edited = turn(13);
    edited[3] = { ...edited[3]!, content: 'a different output' };
    const second = ctxWith({ snapshot: { frozen: first.ctx.state.newFrozen } });
    await new Pipeline([make()]).run(edited, second.ctx);
    expect(model.calls).toHaveLength(2);
    expect(model.calls[1]!.prompt).not.toContain('Summary of the session before');
    expect(second.ctx.state.misses).toBe(1);
  });

  it.each([
    ['the trigger', { trigger: { min_request_tokens: 10_000_000 } }, 'request_trigger_not_fired'],
    ['start_from_message (legacy)', { start_from_message: 500 }, 'request_trigger_not_fired'],
    ['a transcript with nothing between task and tail', { keep_last: 40 }, 'no_span'],
    ['a small span', { min_tokens: 10_000_000 }, 'span_below_min_tokens'],
  ])('does nothing below %s, and says so', async (_name, raw, gate) => {
    const input = turn(12);
    const res = await new Pipeline([make(raw)]).run(input, ctxWith().ctx);
    expect(res.reports[0]!.gates).toEqual({ [gate]: 1 });
    expect(res.messages).toEqual(input);
    expect(model.calls).toHaveLength(0);
  });

  it('is a recorded no-op on every run without a model, and notes a fallback from incoming to config', async () => {
    const pipeline = new Pipeline([make()]);
    for (let t = 12; t <= 13; t++) {
      const none = await pipeline.run(turn(t), testCtx());
      expect(none.reports[0]).toMatchObject({ skipped: true, reverted: false, gates: { no_model: 1 }, changed: [] });
      expect(none.messages).toEqual(turn(t));
    }
    const res = await new Pipeline([make({ model: { source: 'incoming' } })]).run(turn(12), ctxWith().ctx);
    expect(res.reports[0]!.gates).toEqual({ model_source_fell_back_to_config: 1 });
  });

  it.each([
    ['a truncated reply', () => ({ text: '<summary>Read the pars', truncated: true }), 'model_reply_rejected'],
    ['an empty reply', () => ({ text: '<summary> </summary>' }), 'model_reply_rejected'],
    ['a summary longer than the span', () => ({ text: `<summary>${'detail '.repeat(60_000)}</summary>` }), 'summary_not_smaller'],
    ['a server error', () => ({ status: 500, body: '{}' }), 'model_call_failed'],
  ])('leaves the transcript alone on %s', async (_name, script, gate) => {
    const input = turn(4);
    const res = await new Pipeline([make({ min_tokens: 0, keep_last: 1 })]).run(input, ctxWith({}, script as ModelScript).ctx);
    expect(res.reports[0]!.gates).toEqual({ [gate]: 1 });
    expect(res.messages).toEqual(input);
  });

  it('marks the summary as irreversible with marker_mode summary, and when the store cannot persist', async () => {
    const summary = await new Pipeline([make({ marker_mode: 'summary' })]).run(turn(12), ctxWith().ctx);
    expect(summary.reports[0]!.irreversible).toBe(true);
    expect(summary.messages[2]!.content).toMatch(/do not re-summarize\. ⟪cg⟫$/);
    const volatile = ctxWith({ persistent: false }).ctx;
    const off = await new Pipeline([make()]).run(turn(12), volatile);
    expect(off.reports[0]!.irreversible).toBe(true);
    expect(off.messages[2]!.content).toMatch(/do not re-summarize\.$/);
    expect(volatile.stash.entries.size).toBe(0);
  });

  it('keeps the Anthropic task turn first and starts the tail at an assistant turn', async () => {
    const input = decodeRequest('anthropic', JSON.stringify(anthropicTurn(STEPS, 12))).messages;
    const res = await new Pipeline([make()]).run(input, ctxWith({ provider: 'anthropic' }).ctx);
    expect(res.messages[0]).toEqual(input[0]);
    expect(isSummary(res.messages[1])).toBe(true);
    expect(res.messages[2]!.role).toBe('assistant');
  });
});
