// extract with strategy: code applies exactly the program's (proven deletion-only) result: when
// the program keeps the 40 /error|fail/i lines of a log, the forwarded output holds those 40 lines
// and the marker, nothing the deterministic projection would have added around them.
import { Pipeline, type Ctx, type Message } from '@context-guru/components';
import { extractComponent } from '../../../libs/components/src/offload/extract.component';
import { parseModelEnv } from '../../../apps/gateway/src/model/model-env';
import { createModelRuntime, createModelSources } from '../../../apps/gateway/src/model/model-resolver';
import type { ModelRuntime } from '../../../apps/gateway/src/model/http-model';
import { program, startFakeModel, type FakeModelServer } from '../../support/fake-model-server';
import { testCtx } from '../../support/ctx';

const KEEP_ERRORS = "return INPUT.split('\\n').filter((l) => /error|fail/i.test(l)).join('\\n');";

// A CI log of 400 lines, 40 of them errors or failures, spread out.
const LOG = Array.from({ length: 400 }, (_, i) =>
  i % 10 === 3
    ? `2026-11-30T02:${String(i % 60).padStart(2, '0')}:11Z ERROR worker-${i % 7} job ${4000 + i} failed: upstream reset by peer (attempt ${i % 3})`
    : `2026-11-30T02:${String(i % 60).padStart(2, '0')}:10Z INFO worker-${i % 7} job ${4000 + i} step ${i % 5} ok in ${(i * 37) % 900} ms`,
).join('\n');

const messages = (): Message[] => [
  { role: 'user', content: 'Why do the nightly jobs fail? Look at the errors.' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'bash', arguments: '{"command":"cat /var/log/nightly.log"}' }] },
  { role: 'tool', tool_call_id: 'c1', content: LOG },
  { role: 'user', content: 'go on' },
];

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeModel(() => program(KEEP_ERRORS));
});
const runtimes: ModelRuntime[] = [];
afterAll(async () => {
  await model.close();
  await Promise.all(runtimes.map((rt) => rt.sandbox.close()));
});
function ctxWithModel(): Ctx {
  const env = parseModelEnv({
    CHEAP_MODEL: 'claude-haiku-4-5',
    CHEAP_MODEL_BASE: model.url,
    CHEAP_MODEL_KEY: 'k',
    CONTEXT_GURU_LLM_TIMEOUT: '5000ms',
  });
  const rt = createModelRuntime(env);
  runtimes.push(rt);
  const models = createModelSources(env, { dialect: 'openai', model: undefined, upstreamBase: model.url, headers: {} }, rt);
  return { ...testCtx(), models };
}

describe('extract strategy: code applies the program result', () => {
  it('40 kept lines are 40 applied lines', async () => {
    const make = extractComponent.create(extractComponent.options({ strategy: 'code', model: { source: 'config' } }, 'components.extract'));
    const res = await new Pipeline([make]).run(messages(), ctxWithModel());
    const report = res.reports[0]!;
    expect(report.gates).toEqual({});
    const out = res.messages[2]!.content as string;
    const lines = out.split('\n').filter((l) => !l.includes('<<cg:'));
    const expected = LOG.split('\n').filter((l) => /error|fail/i.test(l));
    expect(expected).toHaveLength(40);
    expect(lines).toEqual(expected);
  });
});
