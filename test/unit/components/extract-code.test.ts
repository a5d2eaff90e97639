// extract with strategy: code against a scripted model over HTTP: the model sees the output and the
// task, its program runs in the sandbox, and only a deletion-only result is accepted; every failure
// falls back to the deterministic projection under a named gate, and a re-sent output costs nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pipeline, contentKey, frozenSlot, type Ctx, type Message } from '@context-guru/components';
import { extractComponent } from '../../../libs/components/src/offload/extract.component';
import { closeSharedSandbox } from '../../../libs/components/src/offload/extract/sandbox/sandbox-pool';
import { isDeletionOnly } from '../../../libs/components/src/offload/extract/subsequence';
import { parseModelEnv } from '../../../apps/gateway/src/model/model-env';
import { createModelRuntime, createModelSources } from '../../../apps/gateway/src/model/model-resolver';
import type { ModelRuntime } from '../../../apps/gateway/src/model/http-model';
import { program, startFakeModel, type FakeModelServer, type ModelScript } from '../../support/fake-model-server';
import { testCtx, type TestCtx } from '../../support/ctx';
import { FIXTURE_ROOT } from '../../support/fixtures';
import { githubIssues } from './extract-code.fixture';

const logCase = (): Message[] =>
  JSON.parse(readFileSync(join(FIXTURE_ROOT, 'extract', 'projects-log-onto-query', 'input.json'), 'utf8')).messages;
const LOG = logCase()[3]!.content as string;

/** The bare proof the deletion-only check is stronger than: `out` is an in-order character subsequence of `input`. */
function isCharSubsequence(out: string, input: string): boolean {
  let next = 0;
  for (const ch of out) {
    next = input.indexOf(ch, next) + 1;
    if (next === 0) return false;
  }
  return true;
}
const make = (raw: Record<string, unknown> = {}) =>
  extractComponent.create(extractComponent.options({ strategy: 'code', model: { source: 'config' }, ...raw }, 'components.extract'));

const KEEP_AUTH = `const lines = INPUT.split('\\n');
return lines.filter((l) => l.includes('[crm_sync.auth]') || l.includes('ERROR') || l.includes('sync complete')).join('\\n');`;

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeModel(() => program(KEEP_AUTH));
});
afterAll(async () => {
  await model.close();
  await closeSharedSandbox();
});
// Each runtime owns its program sandbox (as each gateway context does): closed after its test.
const runtimes: ModelRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((rt) => rt.sandbox.close()));
});
beforeEach(() => {
  model.calls.length = 0;
  model.setScript(() => program(KEEP_AUTH));
});

function withModel(
  script?: ModelScript,
  base: Partial<Parameters<typeof testCtx>[0]> = {},
  shared?: ModelRuntime,
): { ctx: TestCtx & Ctx; rt: ModelRuntime } {
  if (script) model.setScript(script);
  const env = parseModelEnv({
    CHEAP_MODEL: 'claude-haiku-4-5',
    CHEAP_MODEL_BASE: model.url,
    CHEAP_MODEL_KEY: 'k',
    CONTEXT_GURU_LLM_TIMEOUT: '300ms',
  });
  const rt = shared ?? createModelRuntime(env);
  runtimes.push(rt);
  const models = createModelSources(env, { dialect: 'openai', model: undefined, upstreamBase: model.url, headers: {} }, rt);
  return { ctx: { ...testCtx(base), models }, rt };
}

async function deterministicOf(messages: Message[]): Promise<Message[]> {
  const det = extractComponent.create(extractComponent.options(undefined, 'components.extract'));
  return (await new Pipeline([det]).run(messages, testCtx())).messages;
}

describe('extract strategy: code', () => {
  it('gives the model the output and the task, runs its program, stashes the original and freezes the result', async () => {
    const { ctx, rt } = withModel();
    const res = await new Pipeline([make()]).run(logCase(), ctx);
    const report = res.reports[0]!;
    expect(report.error).toBeUndefined();
    expect(report.gates).toEqual({});
    const out = res.messages[3]!.content as string;
    const expected = LOG.split('\n')
      .filter((l) => l.includes('[crm_sync.auth]') || l.includes('ERROR') || l.includes('sync complete'))
      .join('\n');
    expect(out).toMatch(
      new RegExp(`^${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n<<cg:[0-9a-f]{16}>> \\[full output: call context_guru_expand\\]$`),
    );
    expect(ctx.stash.entries.get(report.keys[0]!)).toBe(LOG);
    expect(ctx.state.newFrozen.get(frozenSlot('extract', contentKey(LOG)))).toBe(out);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.prompt).toContain('When did the token refresh time out');
    expect(model.calls[0]!.prompt).toContain(LOG.split('\n')[40]!);
    expect(rt.spend.snapshot()).toMatchObject({ llm_calls: 1, llm_errors: 0, llm_timeouts: 0 });
    expect(res.tokensAfter).toBeLessThan(res.tokensBefore);
  });

  it('rejects a program that invents text — even one a bare character check would pass — and projects instead', async () => {
    const fabricated = 'sync failed: data lost';
    expect(isCharSubsequence(fabricated, LOG)).toBe(true);
    expect(isDeletionOnly(fabricated, LOG)).toBe(false);
    const { ctx } = withModel(() => program(`return ${JSON.stringify(fabricated)};`));
    const res = await new Pipeline([make()]).run(logCase(), ctx);
    expect(res.reports[0]!.gates).toEqual({ not_deletion_only: 1 });
    expect(res.messages).toEqual(await deterministicOf(logCase()));
  });

  it('falls back to the projection when the model times out, and counts the timeout', async () => {
    const { ctx, rt } = withModel(() => ({ hang: true }));
    const res = await new Pipeline([make()]).run(logCase(), ctx);
    expect(res.reports[0]!.gates).toEqual({ model_call_failed: 1 });
    expect(res.messages).toEqual(await deterministicOf(logCase()));
    expect(rt.spend.snapshot()).toMatchObject({ llm_timeouts: 1 });
  });

  it.each([
    ['a reply cut by max_tokens', () => ({ text: '```javascript\nreturn INPUT.split("\\n")', truncated: true }), 'reply_without_code'],
    ['a reply without a fenced block', () => ({ text: 'I would keep the auth lines.' }), 'reply_without_code'],
    ['a program that throws', () => program('throw new Error("nope");'), 'sandbox_rejected_program'],
    ['a program that returns nothing useful', () => program('return "   \\n";'), 'code_result_empty'],
    ['a program that keeps everything', () => program('return INPUT;'), 'code_result_not_smaller'],
    ['a server error', () => ({ status: 500, body: '{}' }), 'model_call_failed'],
  ])('names the gate for %s and projects instead', async (_name, script, gate) => {
    const { ctx } = withModel(script as ModelScript);
    const res = await new Pipeline([make()]).run(logCase(), ctx);
    expect(res.reports[0]!.gates).toEqual({ [gate]: 1 });
    expect(res.messages).toEqual(await deterministicOf(logCase()));
  });

  it('reuses the reduced output on a later turn, byte-identically and with no new model call', async () => {
    const first = withModel();
    const turn1 = await new Pipeline([make()]).run(logCase(), first.ctx);
    const later: Message[] = [
      ...logCase(),
      { role: 'assistant', content: 'The refresh timed out once at 09:12:18 and was retried.' },
      { role: 'user', content: 'Now check whether the warehouse load finished.' },
    ];
    // The next turn: the same output re-sent, deep inside the provider's cached prefix.
    const second = withModel(() => ({ status: 500, body: 'must not be called' }), {
      snapshot: { frozen: first.ctx.state.newFrozen },
      cache: { aware: true, maxCachedIdx: 4 },
    });
    const turn2 = await new Pipeline([make()]).run(later, second.ctx);
    expect(turn2.messages[3]!.content).toBe(turn1.messages[3]!.content);
    expect(model.calls).toHaveLength(1);
    expect(second.rt.spend.snapshot().llm_calls).toBe(0);
    expect(second.ctx.stash.entries.get(turn2.reports[0]!.keys[0]!)).toBe(LOG);
  });

  it('pays once when the same request runs its pipeline twice (a prefetch re-run or a client retry)', async () => {
    const { ctx, rt } = withModel();
    const a = await new Pipeline([make()]).run(logCase(), ctx);
    const { ctx: again } = withModel(() => ({ status: 500, body: 'must not be called' }), {}, rt);
    const b = await new Pipeline([make()]).run(logCase(), again);
    expect(model.calls).toHaveLength(1);
    expect(b.messages).toEqual(a.messages);
    const { ctx: otherSession } = withModel(undefined, { session: 'sess-2' }, rt);
    await new Pipeline([make()]).run(logCase(), otherSession);
    expect(model.calls).toHaveLength(2);
    // Another runtime (another gateway in this process) has its own memo: it asks the model itself.
    const { ctx: otherGateway } = withModel();
    await new Pipeline([make()]).run(logCase(), otherGateway);
    expect(model.calls).toHaveLength(3);
  });

  it('makes one call for identical outputs in one request', async () => {
    const messages = logCase();
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_2', name: 'bash', arguments: '{"command":"cat /var/log/crm/nightly.log"}' }],
      },
      { role: 'tool', tool_call_id: 'call_2', content: LOG },
    );
    const { ctx } = withModel();
    const res = await new Pipeline([make()]).run(messages, ctx);
    expect(model.calls).toHaveLength(1);
    expect(res.messages[5]!.content).toBe(res.messages[3]!.content);
  });

  it('spends nothing when the trigger does not fire', async () => {
    for (const trigger of [{ min_request_tokens: 1_000_000 }, { min_messages: 50 }, { min_output_tokens: 1_000_000 }]) {
      const { ctx } = withModel();
      const res = await new Pipeline([make({ trigger })]).run(logCase(), ctx);
      expect(Object.keys(res.reports[0]!.gates)).toEqual([trigger.min_output_tokens ? 'below_output_floor' : 'request_trigger_not_fired']);
    }
    expect(model.calls).toHaveLength(0);
  });

  it('degrades to the projection under a gate when no model exists, and notes a fallback from incoming to config', async () => {
    const none = await new Pipeline([make()]).run(logCase(), testCtx());
    expect(none.reports[0]!.gates).toEqual({ model_unavailable_fell_back_to_deterministic: 1 });
    const { ctx } = withModel();
    const fellBack = await new Pipeline([make({ model: { source: 'incoming' } })]).run(logCase(), ctx);
    expect(fellBack.reports[0]!.gates).toEqual({ model_source_fell_back_to_config: 1 });
    expect(model.calls).toHaveLength(1);
  });

  it('checks JSON structurally: dropped records and keys pass in any key order, a changed value does not', async () => {
    const payload = JSON.stringify(githubIssues(), null, 2);
    const messages: Message[] = [
      { role: 'user', content: 'Which open issues in acme/ledger are labelled bug? I only need number and title.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', name: 'http_get', arguments: '{"url":"https://api.github.com/repos/acme/ledger/issues?state=open"}' }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: payload },
    ];
    const select =
      'JSON.parse(INPUT).filter((i) => i.labels.some((l) => l.name === "bug")).map((i) => ({ title: i.title, number: i.number }))';
    const { ctx } = withModel(() => program(`return JSON.stringify(${select});`));
    const ok = await new Pipeline([make({ min_tokens: 50 })]).run(messages, ctx);
    expect(ok.reports[0]!.gates).toEqual({});
    const kept = JSON.parse((ok.messages[2]!.content as string).split('\n')[0]!) as Array<{ number: number }>;
    expect(kept.map((i) => i.number)).toEqual([4127, 4119, 4102]);

    // A fresh runtime is a fresh reply memo: the second program is really asked for.
    const { ctx: ctx2 } = withModel(() =>
      program(`return JSON.stringify(${select}.map((i) => ({ ...i, title: i.title.toUpperCase() })));`),
    );
    const bad = await new Pipeline([make({ min_tokens: 50 })]).run(messages, ctx2);
    expect(bad.reports[0]!.gates).toMatchObject({ not_deletion_only: 1 });
  });

  it('with rewrite: true accepts a reworded result, marked as irreversible', async () => {
    const { ctx } = withModel(() => program('return "token refresh timed out at 09:12:18 (ReadTimeoutError); retried and recovered";'));
    const res = await new Pipeline([make({ rewrite: true, marker_mode: 'summary' })]).run(logCase(), ctx);
    expect(res.reports[0]!.irreversible).toBe(true);
    expect(res.messages[3]!.content).toBe('token refresh timed out at 09:12:18 (ReadTimeoutError); retried and recovered\n⟪cg⟫');
    expect(model.calls[0]!.system).toContain('You may condense or rewrite');
  });
});
