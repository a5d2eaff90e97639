// Withdrawn breakpoints (cacheinject withdraw_read_once, on in `auto` and `agent`): on a real
// Claude Code-shaped session, a newest turn whose tool outputs mask offloads once read goes
// without the client's breakpoints on it — and only then, only on that turn, only the
// `cache_control` bytes — while the prefix boundary keeps one; the turn cache forwards exactly
// what a full decode + encode does, also for a client that leaves its breakpoints in place.
import { prepareRequest } from '../../../libs/engine/src/prepare-request';
import { createTenantRuntime, type TenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { countBreakpoints } from '../../../libs/engine/src/wire/breakpoints';
import { decodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { TurnCache } from '../../../libs/engine/src/wire/turn-cache';
import { withdrawalEdits } from '../../../libs/engine/src/wire/withdraw-breakpoints';
import { applyEdits } from '../../../libs/engine/src/wire/splice';
import { realCorpus, realRequest, type RealSession } from '../../../bench/real-corpus';
import { withoutCacheControl } from '../../support/prompt-cache';
import { turnDeps } from '../../support/turn-fixtures';

type Json = Record<string, unknown>;

function input(tenant: TenantRuntime, raw: string, text?: ReturnType<TurnCache['text']>) {
  return {
    route: 'anthropic' as const,
    dialect: 'anthropic' as const,
    raw,
    text,
    tenant,
    pipeline: tenant.built.pipeline,
    cacheMode: 'auto' as const,
    sessionHeader: 'withdraw',
    bypassHeader: false,
  };
}

const stripped = withoutCacheControl;
const hasBreakpoint = (v: unknown): boolean => JSON.stringify(v).includes('"cache_control"');

/**
 * The client's body for turn t. Claude Code moves one breakpoint to the newest message every turn;
 * a `sticky` client marks the newest message and the assistant message before it on the fifth turn
 * and leaves those marks in place, so later turns repeat the bytes of a message whose breakpoint
 * the gateway withdrew, after a boundary whose breakpoint is the client's.
 */
function clientBody(s: RealSession, t: number, sticky: boolean): Json {
  const body = realRequest(s, 'anthropic', t);
  if (!sticky) return body;
  const all = body.messages as Json[];
  const fifth = t >= 5 ? s.formats.anthropic.requestEnds[4] : undefined;
  // The newest message of that turn and the assistant message before it (the prefix boundary).
  const marked = new Set(fifth === undefined ? [] : [fifth - 1, all.slice(0, fifth).findLastIndex((m) => m.role === 'assistant')]);
  const messages = (body.messages as Json[]).map((m, i) => {
    const bare = stripped(m) as Json;
    if (!marked.has(i) || !Array.isArray(bare.content)) return bare;
    const blocks = (bare.content as Json[]).map((b, k, all) => (k === all.length - 1 ? { ...b, cache_control: { type: 'ephemeral' } } : b));
    return { ...bare, content: blocks };
  });
  return { ...body, messages };
}

const longest = realCorpus()
  .filter((s) => s.formats.anthropic.requestEnds.length >= 20)
  .slice(0, 2);

describe('withdrawn breakpoints on a real session', () => {
  for (const sticky of [false, true]) {
    it(`${sticky ? 'a client keeping its breakpoints' : 'Claude Code moving its breakpoint'}: only the newest turn's cache_control goes, warm = cold`, async () => {
      let withdrawnTurns = 0;
      let keptTurns = 0;
      for (const s of longest) {
        const tenant = createTenantRuntime('t', { preset: 'auto' }, 1);
        // The same pipeline with the withdrawal off: what the gateway forwards but for the newest turn's breakpoints.
        const plain = createTenantRuntime('p', { preset: 'auto', components: { cacheinject: { withdraw_read_once: false } } }, 1);
        const cache = new TurnCache();
        const [warm, cold, base] = [turnDeps(cache), turnDeps(), turnDeps()];
        const turns = s.formats.anthropic.requestEnds.length;
        for (let t = 1; t <= turns; t++) {
          const body = clientBody(s, t, sticky);
          const raw = JSON.stringify(body);
          const text = cache.text('anthropic', Buffer.from(raw), tenant.id);
          const x = await prepareRequest(warm, input(tenant, raw, text));
          const y = await prepareRequest(cold, input(tenant, raw));
          const z = await prepareRequest(base, input(plain, raw));
          expect(x.outgoing === y.outgoing).toBe(true);
          const sent = JSON.parse(y.outgoing) as Json;
          const without = JSON.parse(z.outgoing) as Json;
          expect(countBreakpoints(sent)).toBeLessThanOrEqual(4);
          // Nothing but cache metadata differs, and only on the newest message.
          expect(stripped(sent)).toEqual(stripped(without));
          const outMsgs = sent.messages as Json[];
          const baseMsgs = without.messages as Json[];
          const last = outMsgs.length - 1;
          expect(outMsgs.slice(0, last)).toEqual(baseMsgs.slice(0, last));
          if (hasBreakpoint(baseMsgs[last]) && !hasBreakpoint(outMsgs[last])) {
            withdrawnTurns++;
            // The boundary (the last assistant message) holds the breakpoint the next turn reads to.
            const assistant = outMsgs.findLastIndex((m) => m.role === 'assistant');
            expect(hasBreakpoint(outMsgs[assistant])).toBe(true);
          } else {
            expect(outMsgs[last]).toEqual(baseMsgs[last]);
            if (hasBreakpoint(baseMsgs[last])) keptTurns++;
          }
        }
      }
      // Both kinds of turn occur: small newest outputs keep the client's breakpoint.
      expect(withdrawnTurns).toBeGreaterThan(sticky ? 0 : 5);
      expect(keptTurns).toBeGreaterThan(0);
    });
  }

  it('a preset without withdraw_read_once never withdraws', async () => {
    const s = longest[0]!;
    const tenant = createTenantRuntime('t', { preset: 'balanced' }, 1);
    const deps = turnDeps();
    for (let t = 1; t <= s.formats.anthropic.requestEnds.length; t++) {
      const body = clientBody(s, t, false);
      const out = JSON.parse((await prepareRequest(deps, input(tenant, JSON.stringify(body)))).outgoing) as Json;
      const msgs = out.messages as Json[];
      expect(hasBreakpoint(msgs[msgs.length - 1])).toBe(true);
    }
  });
});

describe('withdrawalEdits', () => {
  const cases: Array<[string, string]> = [
    [
      'last member',
      '{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x","cache_control":{"type":"ephemeral"}}]}',
    ],
    ['first member', '{"role":"user","content":[{ "cache_control" : {"type":"ephemeral"} , "type":"text","text":"x"}]}'],
    [
      'a tool_result part',
      '{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"y","cache_control":{"type":"ephemeral"}}]}]}',
    ],
    ['on the message', '{"role":"user","cache_control":{"type":"ephemeral"},"content":[{"type":"text","text":"z"}]}'],
  ];
  for (const [name, newest] of cases) {
    it(`removes a breakpoint as ${name}, nothing else, and never one before the boundary`, () => {
      const head = '{"role":"user","content":[{"type":"text","text":"task","cache_control":{"type":"ephemeral"}}]}';
      const asst = '{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"bash","input":{}}]}';
      const raw = `{"model":"m","max_tokens":8,"messages":[${head},${asst},\n ${newest}]}`;
      const view = decodeRequest('anthropic', raw);
      const boundary = view.messages.findIndex((m) => m.role === 'assistant');
      const edits = withdrawalEdits(view, boundary);
      expect(edits).toHaveLength(1);
      const out = JSON.parse(applyEdits(raw, edits)) as Json;
      const before = JSON.parse(raw) as Json;
      const [m0, m1, m2] = out.messages as Json[];
      expect(m0).toEqual((before.messages as Json[])[0]);
      expect(m1).toEqual((before.messages as Json[])[1]);
      expect(m2).toEqual(stripped((before.messages as Json[])[2]));
      expect(hasBreakpoint(m2)).toBe(false);
    });
  }

  it('leaves a key spelled with an escape where it is', () => {
    const raw =
      '{"model":"m","max_tokens":8,"messages":[{"role":"assistant","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"b","cache\\u005fcontrol":{"type":"ephemeral"}}]}]}';
    const view = decodeRequest('anthropic', raw);
    expect(withdrawalEdits(view, 0)).toEqual([]);
  });
});
