// After an in-band expand, through the real gateway and a caching provider (the prompt-cache
// simulator): the model keeps the original on every later turn because the gateway re-inserts the
// expand call and its result exactly where the provider saw them (docs/cache.md, "The expand
// trail"), so the masked message stays masked and nothing the provider cached changes — no
// un-masking, no bust, every warm turn reads the previous turn's whole prompt from the cache. The
// content stays kept-verbatim: a cold turn masks other old outputs at depth, never that one.
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { PromptCacheSim, cachingScript, canonicalMessages, prefixBust, promptSegments, type BilledRequest } from '../support/prompt-cache';
import { anthropicJson, openaiJson, readTurn } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn, type AgentStep } from '../support/transcripts';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3, cold_cache: true }\n';
const TURNS = 34;
const COLD = [20, 30];
const EXPAND_TURN = 22;
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/;
const MASKED_JSON = /^\[older tool output masked; starts: [[{]/;
const EXPAND = 'context_guru_expand';

interface Msg {
  role: string;
  content: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string } }>;
}
type Block = { type: string; content?: unknown; id?: string; name?: string; tool_use_id?: string };

/** Tool outputs of a forwarded body, by message index (either dialect; expand results excluded). */
function toolTexts(req: RecordedRequest): Map<number, string> {
  const out = new Map<number, string>();
  const expand = expandIds(req);
  (req.body.messages as Msg[]).forEach((m, i) => {
    if (m.role === 'tool' && typeof m.content === 'string' && !expand.has(m.tool_call_id ?? '')) out.set(i, m.content);
    if (Array.isArray(m.content)) {
      for (const b of m.content as Block[])
        if (b.type === 'tool_result' && typeof b.content === 'string' && !expand.has(b.tool_use_id ?? '')) out.set(i, b.content);
    }
  });
  return out;
}

function expandIds(req: RecordedRequest): Set<string> {
  const out = new Set<string>();
  for (const m of req.body.messages as Msg[]) {
    for (const c of m.tool_calls ?? []) if (c.function.name === EXPAND) out.add(c.id);
    if (Array.isArray(m.content)) for (const b of m.content as Block[]) if (b.type === 'tool_use' && b.name === EXPAND) out.add(b.id!);
  }
  return out;
}

/** The expand results a forwarded body carries, in order. */
const expandResults = (req: RecordedRequest): string[] => readTurn(req).expandResults;

/** Claude Code's breakpoint on the newest block of its last message. */
function markNewest(body: Record<string, unknown>): Record<string, unknown> {
  const messages = body.messages as Array<{ content: unknown }>;
  const last = messages[messages.length - 1]!;
  const blocks = last.content as Array<Record<string, unknown>>;
  blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: { type: 'ephemeral' } };
  return body;
}

describe.each(['anthropic', 'openai'] as const)('kept-verbatim after an expand (%s)', (dialect) => {
  const steps: AgentStep[] = agentSteps(TURNS, dialect === 'anthropic' ? 5 : 6);
  let upstream: FakeUpstream;
  let gateway: GatewayHarness;
  let now = 1_700_000_000_000;
  let expandNext = false;
  let expandedIndex = -1;
  const firsts: RecordedRequest[] = [];
  const billed: BilledRequest[] = [];
  const firstBills: BilledRequest[] = [];
  let continuation: RecordedRequest | undefined;

  const callId = (s: AgentStep): string => (dialect === 'anthropic' ? s.id.replace('call', 'toolu') : s.id);

  /** The model calls the transcript's next tool; on the expand turn it first asks for a masked output's original. */
  function script(req: RecordedRequest): ScriptedReply {
    const turn = readTurn(req);
    if (expandNext && turn.advertised) {
      const texts = [...toolTexts(req)].filter(([, t]) => MARKER.test(t));
      const [index, text] = texts.find(([, t]) => MASKED_JSON.test(t)) ?? texts[0]!;
      const id = MARKER.exec(text)![1]!;
      expandNext = false;
      expandedIndex = index;
      return dialect === 'anthropic'
        ? anthropicJson('', { id: 'toolu_01ExpandKept', name: EXPAND, input: { id } })
        : openaiJson('', { id: 'call_ExpandKept', name: EXPAND, args: JSON.stringify({ id }) });
    }
    // The answer is the call the client's next turn carries (the transcript is the agent's history).
    const step = steps.find((s) => !req.raw.includes(`"${callId(s)}"`));
    if (!step) return dialect === 'anthropic' ? anthropicJson('done') : openaiJson('done');
    return dialect === 'anthropic'
      ? anthropicJson('', { id: callId(step), name: step.tool, input: step.args })
      : openaiJson('', { id: step.id, name: step.tool, args: JSON.stringify(step.args) });
  }

  beforeAll(async () => {
    upstream = await startFakeUpstream(cachingScript(new PromptCacheSim({ now: () => now }), script, billed));
    // The blanket tail gate under test: priced rewrites off (test/e2e/cache-priced.test.ts covers them).
    gateway = await startGateway(upstream.url, { CONFIG, REWRITE_PAYBACK_TURNS: '0' }, { clock: { now: () => now } });
    const path = dialect === 'anthropic' ? '/anthropic/v1/messages' : '/openai/v1/chat/completions';
    for (let t = 1; t <= TURNS; t++) {
      now += COLD.includes(t) ? 2 * 3600_000 : 15_000;
      expandNext = t === EXPAND_TURN;
      const at = upstream.requests.length;
      const body = dialect === 'anthropic' ? markNewest(anthropicTurn(steps, t)) : openaiTurn(steps, t);
      const res = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-context-guru-session': `kept-${dialect}`, authorization: 'Bearer sk-kept' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      const answer = JSON.stringify(await res.json());
      expect(answer).not.toContain(EXPAND);
      // The client's next turn carries exactly this answer: the transcript's next tool call.
      if (t < TURNS) expect(answer).toContain(callId(steps[t]!));
      firsts.push(upstream.requests[at]!);
      firstBills.push(billed[at]!);
      if (t === EXPAND_TURN) {
        expect(upstream.requests.length).toBe(at + 2);
        continuation = upstream.requests[at + 1]!;
      }
    }
  }, 120_000);

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('every later turn carries the expand call and the original where the provider saw them; the masked message stays masked', () => {
    expect(expandedIndex).toBeGreaterThan(0);
    const [original] = expandResults(continuation!);
    expect(original).not.toMatch(MARKER);
    expect(original!.length).toBeGreaterThan(500);
    // A JSON output: format compacted it first, so its keys are not the received text's keys.
    expect(original).toBe(JSON.stringify(JSON.parse(original!)));
    const masked = toolTexts(firsts[EXPAND_TURN - 1]!).get(expandedIndex);
    expect(masked).toMatch(MARKER);
    const cont = canonicalMessages(continuation!.body);
    firsts.slice(EXPAND_TURN).forEach((req, k) => {
      expect(expandResults(req)).toEqual([original]);
      expect(toolTexts(req).get(expandedIndex)).toBe(masked);
      expect(validateProviderShape(dialect, req.body)).toEqual([]);
      // Until the next cold turn, what the continuation showed the provider (the model's turn and the
      // result included) comes back unchanged, breakpoints aside.
      if (EXPAND_TURN + 1 + k < COLD[1]!) expect(canonicalMessages(req.body).slice(0, cont.length)).toEqual(cont);
    });
  });

  it('the cold turn after the expand masks other old outputs at depth, never the kept one', () => {
    const cold = firsts[COLD[1]! - 1]!;
    const prev = firsts[COLD[1]! - 2]!;
    const newlyMasked = [...toolTexts(cold)].filter(([i, t]) => MARKER.test(t) && !MARKER.test(toolTexts(prev).get(i) ?? ''));
    expect(newlyMasked.length).toBeGreaterThan(0);
    expect(newlyMasked.map(([i]) => i)).not.toContain(expandedIndex);
  });

  it('no turn outside the cold ones changes a message already sent: zero busts', () => {
    for (let k = 1; k < firsts.length; k++) {
      const t = k + 1;
      if (COLD.includes(t)) continue;
      expect([t, prefixBust(firsts[k - 1]!.body, firsts[k]!.body)]).toEqual([t, -1]);
    }
  });

  it('the caching provider reads each warm turn the whole prompt it was sent on the turn before', () => {
    for (let k = 1; k < firsts.length; k++) {
      const t = k + 1;
      if (COLD.includes(t) || COLD.includes(t - 1)) continue;
      const before = promptSegments(dialect, firstBills[k - 1]!.body).reduce((n, s) => n + s.tokens, 0);
      // OpenAI reads in 128-token steps.
      expect([t, firstBills[k]!.bill.cacheRead >= before - (dialect === 'openai' ? 128 : 0)]).toEqual([t, true]);
    }
  });

  it('counts the bounce', async () => {
    const s = (await (await fetch(`${gateway.url}/stats`)).json()) as Record<string, number>;
    expect(s.bounces).toBe(1);
    expect(s.expand_rounds).toBe(1);
    expect(s.wasted_tokens).toBeGreaterThan(100);
  });
});
