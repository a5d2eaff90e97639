// The turn cache on the Responses API: a warm turn reuses the previous turn's decoded and encoded
// `input` prefix, and what it forwards is byte-identical to a full decode + encode on every turn,
// whatever the pipeline did; a prefix the new items cannot be normalized after is decoded whole.
import { prepareRequest } from '../../../libs/engine/src/prepare-request';
import { createTenantRuntime, type TenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { decodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { TurnCache } from '../../../libs/engine/src/wire/turn-cache';
import { callItem, responsesTurn, textItem } from '../../support/responses-fixtures';
import { agentSteps } from '../../support/transcripts';
import { turnDeps } from '../../support/turn-fixtures';

type Item = Record<string, unknown>;

function prepareInput(tenant: TenantRuntime, raw: string, text?: ReturnType<TurnCache['text']>) {
  return {
    route: 'responses' as const,
    dialect: 'responses' as const,
    raw,
    text,
    tenant,
    pipeline: tenant.built.pipeline,
    cacheMode: 'auto' as const,
    sessionHeader: 'same',
    bypassHeader: false,
  };
}

/** Turn `t` of a Codex-shaped session, with the variations a real client makes. */
function body(steps: ReturnType<typeof agentSteps>, t: number): Record<string, unknown> {
  const b = responsesTurn(steps, t);
  const input = b.input as Item[];
  // Multi-byte text and three interleaved variants of the task: reuse must come from the entry
  // whose bytes really match (turn t-3), never merely from the previous turn.
  input[1] = { type: 'message', role: 'user', content: [{ type: 'input_text', text: `Fix it — ünïcödé 🚀 variant ${t % 3}` }] };
  // Every fifteenth turn the client rewrites an output at depth (a compaction-like rewrite).
  const deep = input.findIndex((it) => it.type === 'function_call_output');
  if (t % 15 === 0 && deep >= 0) input[deep] = { ...input[deep], output: 'rewritten earlier output' };
  return b;
}

describe('the turn cache on Responses bodies', () => {
  for (const preset of ['agent', 'balanced', 'safe']) {
    it(`${preset}: every turn's body equals the full decode + encode, text and decode reused`, async () => {
      const steps = agentSteps(36, 31);
      const tenant = createTenantRuntime('t', { preset }, 1);
      const cache = new TurnCache();
      const [warm, cold] = [turnDeps(cache), turnDeps()];
      for (let t = 1; t <= 36; t++) {
        const raw = JSON.stringify(body(steps, t));
        const text = cache.text('responses', Buffer.from(raw), tenant.id);
        const [x, y] = [await prepareRequest(warm, prepareInput(tenant, raw, text)), await prepareRequest(cold, prepareInput(tenant, raw))];
        expect(x.outgoing === y.outgoing).toBe(true);
        expect(x.advertised).toBe(y.advertised);
        expect(x.report.saved).toEqual(y.report.saved);
      }
      expect(cache.hits).toBeGreaterThan(24);
      expect(cache.bytesShared).toBeGreaterThan(0);
    });
  }

  it('decodes whole when the prefix ends where a new call would join it (an assistant message, a call)', () => {
    const cache = new TurnCache();
    const steps = agentSteps(4, 5);
    const base = responsesTurn(steps, 2);
    const input = base.input as Item[];
    const said = textItem('msg_9', 'Looking at the parser next.');
    const first = { ...base, input: [...input, said] };
    const second = { ...base, input: [...input, said, callItem('fc_9', 'call_9', 'bash', '{"arg":"ls"}')] };
    const output = { type: 'function_call_output', call_id: 'call_9', output: 'a\nb' };
    const third = { ...second, input: [...second.input, output] };
    // A second call right after the first joins its run (parallel calls): one assistant turn.
    const fourth = { ...second, input: [...second.input, callItem('fc_10', 'call_10', 'bash', '{"arg":"pwd"}'), output] };
    for (const b of [first, second, third, fourth]) {
      const raw = JSON.stringify(b);
      const turn = cache.decode('responses', raw, 't');
      const full = decodeRequest('responses', raw);
      // The call joins the assistant message as on a full decode: one turn, not two.
      expect(turn.view.messages).toEqual(full.messages);
      expect(turn.view.slots).toEqual(full.slots);
      expect(turn.view.body).toEqual(full.body);
      cache.encode(turn, turn.view.messages, { injectExpand: true }, 't');
    }
    // first: cold; second: the call follows the assistant message (whole); third: an output
    // follows the call (warm); fourth: a call follows the call (whole).
    expect([cache.misses, cache.hits]).toEqual([3, 1]);
  });

  it('decodes whole when a later duplicate `input` key would win', () => {
    const cache = new TurnCache();
    const b = responsesTurn(agentSteps(3, 9), 2);
    const raw = JSON.stringify(b);
    cache.encode(cache.decode('responses', raw, 't'), decodeRequest('responses', raw).messages, { injectExpand: false }, 't');
    const withNew = JSON.stringify({ ...b, input: [...(b.input as Item[]), { type: 'message', role: 'user', content: 'go on' }] });
    const dup = `${withNew.slice(0, -1)},"input":"just this"}`;
    const turn = cache.decode('responses', dup, 't');
    expect(turn.reuse).toBeNull();
    expect(turn.view.body.input).toBe('just this');
    expect(turn.view.messages).toEqual(decodeRequest('responses', dup).messages);
  });
});
