// `incoming` reuses the proxied request's model, endpoint and credential — and nothing else of the
// caller's headers; `config` is the operator's cheap model. Both are plain ModelClients.
import { parseModelEnv } from '../../../apps/gateway/src/model/model-env';
import { createModelRuntime, createModelSources, incomingAuthHeaders } from '../../../apps/gateway/src/model/model-resolver';
import { startFakeModel, type FakeModelServer } from '../../support/fake-model-server';

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeModel(() => ({ text: 'ok' }));
});
afterAll(() => model.close());
beforeEach(() => (model.calls.length = 0));

const INBOUND = {
  authorization: 'Bearer sk-caller',
  'x-api-key': 'sk-ant-caller',
  'anthropic-version': '2023-06-01',
  'anthropic-beta': 'prompt-caching-2024-07-31, oauth-2025-04-20',
  'x-context-guru-session': 'sess-9',
  'x-context-guru-bypass': 'false',
  cookie: 'a=b',
  'user-agent': 'claude-cli/1.0',
  'content-length': '1234',
};

describe('model sources', () => {
  it('incoming: the request model on the route upstream, with only the credential headers', async () => {
    const env = parseModelEnv({});
    const rt = createModelRuntime(env);
    const sources = createModelSources(
      env,
      { dialect: 'anthropic', model: 'claude-sonnet-4-5', upstreamBase: model.url, headers: INBOUND },
      rt,
    );
    expect(sources.config).toBeUndefined();
    expect(sources.incoming!.id).toBe('anthropic:claude-sonnet-4-5');
    await sources.incoming!.complete({ system: 's', prompt: 'p', maxTokens: 10, purpose: 'summarize' });
    const h = model.calls[0]!.headers;
    expect(model.calls[0]!.body.model).toBe('claude-sonnet-4-5');
    expect(h.authorization).toBe('Bearer sk-caller');
    expect(h['x-api-key']).toBe('sk-ant-caller');
    expect(h['anthropic-beta']).toBe('oauth-2025-04-20');
    for (const name of Object.keys(h)) expect(name.startsWith('x-context-guru-')).toBe(false);
    expect(h.cookie).toBeUndefined();
    expect(h['user-agent']).not.toBe('claude-cli/1.0');
  });

  it('never lends a tenant key to the model, and adds anthropic-version when the caller sent none', () => {
    const h = incomingAuthHeaders('anthropic', { 'x-api-key': 'cg_live_abcdefghijklmnopqrstuvwxyz' });
    expect(h).toEqual({ 'anthropic-version': '2023-06-01' });
    expect(incomingAuthHeaders('openai', { authorization: 'Bearer sk-o', 'openai-project': 'p1', 'x-context-guru-session': 's' })).toEqual({
      authorization: 'Bearer sk-o',
      'openai-project': 'p1',
    });
  });

  it('no incoming client without a model id; config exists whenever CHEAP_MODEL is set', () => {
    const env = parseModelEnv({ CHEAP_MODEL: 'claude-haiku-4-5', CHEAP_MODEL_BASE: model.url, CHEAP_MODEL_KEY: 'k' });
    const rt = createModelRuntime(env);
    const sources = createModelSources(env, { dialect: 'openai', model: 42, upstreamBase: model.url, headers: {} }, rt);
    expect(sources.incoming).toBeUndefined();
    expect(sources.config!.id).toBe('anthropic:claude-haiku-4-5');
  });
});
