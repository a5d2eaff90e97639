// The compaction-model clients against a scripted model over real HTTP: request shape per dialect,
// spend on every path (usage, truncation, errors, timeouts) and the process-wide cap.
import type { Dialect, ModelRequest } from '@context-guru/components';
import type { ModelRuntime } from '../../../apps/gateway/src/model/http-model';
import { parseModelEnv } from '../../../apps/gateway/src/model/model-env';
import { createModelRuntime, createModelSources } from '../../../apps/gateway/src/model/model-resolver';
import { startFakeModel, type FakeModelServer } from '../../support/fake-model-server';

const REQ: ModelRequest = { system: 'be brief', prompt: 'filter this', maxTokens: 4096, purpose: 'extract' };

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeModel(() => ({ text: 'ok' }));
});
afterAll(() => model.close());
beforeEach(() => {
  model.calls.length = 0;
  model.setScript(() => ({ text: 'ok' }));
});

function runtime(extra: Record<string, string> = {}): ModelRuntime {
  return createModelRuntime(parseModelEnv({ CONTEXT_GURU_LLM_TIMEOUT: '300ms', CONTEXT_GURU_SUMMARIZE_TIMEOUT: '2s', ...extra }));
}

function cheap(provider: Dialect, rt: ModelRuntime) {
  const env = parseModelEnv({
    CHEAP_MODEL: `${provider}-cheap`,
    CHEAP_MODEL_PROVIDER: provider,
    CHEAP_MODEL_BASE: model.url,
    CHEAP_MODEL_KEY: 'k-cheap',
  });
  return createModelSources(env, { dialect: 'openai', model: undefined, upstreamBase: 'http://unused', headers: {} }, rt).config!;
}

describe('model clients', () => {
  it('speak Anthropic Messages: max_tokens, system, one user turn, anthropic-version, x-api-key', async () => {
    model.setScript(() => ({ text: 'summary', inputTokens: 1234, outputTokens: 56 }));
    const rt = runtime();
    const reply = await cheap('anthropic', rt).complete(REQ);
    expect(reply).toEqual({ text: 'summary', inputTokens: 1234, outputTokens: 56, truncated: false });
    const call = model.calls[0]!;
    expect(call.path).toBe('/v1/messages');
    expect(call.body).toEqual({
      model: 'anthropic-cheap',
      max_tokens: 4096,
      system: 'be brief',
      messages: [{ role: 'user', content: 'filter this' }],
    });
    expect(call.headers['anthropic-version']).toBe('2023-06-01');
    expect(call.headers['x-api-key']).toBe('k-cheap');
    expect(rt.spend.snapshot()).toMatchObject({ llm_calls: 1, llm_input_tokens: 1234, llm_output_tokens: 56, llm_errors: 0 });
  });

  it('speak OpenAI Chat Completions with a bearer key, and honour model.model', async () => {
    const rt = runtime();
    await cheap('openai', rt).complete({ ...REQ, model: 'gpt-other', purpose: 'summarize' });
    const call = model.calls[0]!;
    expect(call.path).toBe('/v1/chat/completions');
    expect(call.body).toEqual({
      model: 'gpt-other',
      max_tokens: 4096,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'filter this' },
      ],
    });
    expect(call.headers.authorization).toBe('Bearer k-cheap');
    expect(rt.spend.snapshot().llm_by_component.summarize.llm_calls).toBe(1);
  });

  it('report a reply cut by max_tokens as truncated, in both dialects', async () => {
    model.setScript(() => ({ text: 'half', truncated: true }));
    const rt = runtime();
    expect((await cheap('anthropic', rt).complete(REQ)).truncated).toBe(true);
    expect((await cheap('openai', rt).complete(REQ)).truncated).toBe(true);
    expect(rt.spend.snapshot().llm_truncated).toBe(2);
  });

  it('retry once with max_completion_tokens when the model refuses max_tokens', async () => {
    model.setScript((c) =>
      'max_tokens' in c.body
        ? { status: 400, body: '{"error":{"message":"Unsupported parameter: \'max_tokens\'. Use \'max_completion_tokens\' instead."}}' }
        : { text: 'fine' },
    );
    const rt = runtime();
    expect((await cheap('openai', rt).complete(REQ)).text).toBe('fine');
    expect(model.calls.map((c) => Object.keys(c.body).filter((k) => k.startsWith('max')))).toEqual([
      ['max_tokens'],
      ['max_completion_tokens'],
    ]);
    expect(rt.spend.snapshot()).toMatchObject({ llm_calls: 2, llm_errors: 0 });
  });

  it('fail with the status only (no URL, no key) and count an error', async () => {
    model.setScript(() => ({ status: 529, body: '{"type":"error","error":{"type":"overloaded_error"}}' }));
    const rt = runtime();
    const err = await cheap('anthropic', rt)
      .complete(REQ)
      .catch((e: Error) => e);
    expect((err as Error).message).toBe('model call failed: 529');
    expect((err as Error).message).not.toContain(model.url);
    expect(rt.spend.snapshot()).toMatchObject({ llm_calls: 1, llm_errors: 1, llm_timeouts: 0 });
  });

  it('time out per purpose and count a timeout', async () => {
    model.setScript(() => ({ hang: true }));
    const rt = runtime();
    const err = await cheap('openai', rt)
      .complete(REQ)
      .catch((e: Error) => e);
    expect((err as Error).message).toMatch(/timed out after 300 ms/);
    expect(rt.spend.snapshot()).toMatchObject({ llm_timeouts: 1, llm_errors: 0 });
  });

  it('share one process-wide cap: a call queued behind a hung one times out without being sent', async () => {
    model.setScript(() => ({ hang: true }));
    const rt = runtime({ CHEAP_MODEL_CONCURRENT: '1', CONTEXT_GURU_SUMMARIZE_TIMEOUT: '1s' });
    const a = cheap('anthropic', rt);
    const b = cheap('openai', rt);
    // The summarize call holds the only slot (1 s deadline); the extract call waits behind it (300 ms).
    const results = await Promise.allSettled([a.complete({ ...REQ, purpose: 'summarize' }), b.complete(REQ)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(model.calls).toHaveLength(1);
    expect(rt.spend.snapshot()).toMatchObject({ llm_calls: 1, llm_timeouts: 2 });
    expect(rt.limiter.inFlight).toBe(0);
  });
});
