// Kept-verbatim through the real gateway: once the model expands a marker, that content reaches
// the provider verbatim on every later turn — never masked, collapsed or replayed again, not on a
// cold turn either. Un-masking it is the one rewrite of an already-sent message the gateway makes
// on purpose, and it starts exactly at the kept message.
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { PromptCacheSim, cachingScript, prefixBust } from '../support/prompt-cache';
import { anthropicJson, answerText, openaiJson, readTurn } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3, cold_cache: true }\n';
const TURNS = 34;
const COLD = [20, 30];
const EXPAND_TURN = 22;
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/;
const MASKED_JSON = /^\[older tool output masked; starts: [[{]/;

interface Msg {
  role: string;
  content: unknown;
}

/** Tool outputs of a forwarded body, by message index (either dialect). */
function toolTexts(req: RecordedRequest): Map<number, string> {
  const out = new Map<number, string>();
  (req.body.messages as Msg[]).forEach((m, i) => {
    if (m.role === 'tool' && typeof m.content === 'string') out.set(i, m.content);
    if (Array.isArray(m.content)) {
      for (const b of m.content as Array<{ type: string; content?: unknown }>)
        if (b.type === 'tool_result' && typeof b.content === 'string') out.set(i, b.content);
    }
  });
  return out;
}

describe.each(['anthropic', 'openai'] as const)('kept-verbatim after an expand (%s)', (dialect) => {
  const steps = agentSteps(TURNS, dialect === 'anthropic' ? 5 : 6);
  let upstream: FakeUpstream;
  let gateway: GatewayHarness;
  let now = 1_700_000_000_000;
  let expandNext = false;
  let expandedIndex = -1;
  const firsts: RecordedRequest[] = [];
  let continuation: RecordedRequest | undefined;

  /** Answers; when told to, asks for the original behind a masked JSON output (or any marker). */
  function script(req: RecordedRequest): ScriptedReply {
    const turn = readTurn(req);
    if (expandNext && turn.advertised && turn.expandResults.length === 0) {
      const texts = [...toolTexts(req)].filter(([, t]) => MARKER.test(t));
      const [index, text] = texts.find(([, t]) => MASKED_JSON.test(t)) ?? texts[0]!;
      const id = MARKER.exec(text)![1]!;
      expandNext = false;
      expandedIndex = index;
      return dialect === 'anthropic'
        ? anthropicJson('', { id: 'toolu_01ExpandKept', name: 'context_guru_expand', input: { id } })
        : openaiJson('', { id: 'call_ExpandKept', name: 'context_guru_expand', args: JSON.stringify({ id }) });
    }
    return dialect === 'anthropic' ? anthropicJson(answerText(turn)) : openaiJson(answerText(turn));
  }

  beforeAll(async () => {
    upstream = await startFakeUpstream(cachingScript(new PromptCacheSim({ now: () => now }), script));
    gateway = await startGateway(upstream.url, { CONFIG }, { clock: { now: () => now } });
    const path = dialect === 'anthropic' ? '/anthropic/v1/messages' : '/openai/v1/chat/completions';
    for (let t = 1; t <= TURNS; t++) {
      now += COLD.includes(t) ? 2 * 3600_000 : 15_000;
      expandNext = t === EXPAND_TURN;
      const at = upstream.requests.length;
      const res = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-context-guru-session': `kept-${dialect}`, authorization: 'Bearer sk-kept' },
        body: JSON.stringify(dialect === 'anthropic' ? anthropicTurn(steps, t) : openaiTurn(steps, t)),
      });
      expect(res.status).toBe(200);
      const answer = JSON.stringify(await res.json());
      expect(answer).not.toContain('context_guru_expand');
      firsts.push(upstream.requests[at]!);
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

  it('the continuation carried the original, and every later turn sends it verbatim in place', () => {
    expect(expandedIndex).toBeGreaterThan(0);
    const results = toolTexts(continuation!);
    const original = [...results.values()].pop()!;
    expect(original).not.toMatch(MARKER);
    expect(original.length).toBeGreaterThan(500);
    // A JSON output: format compacted it first, so its keys are not the received text's keys.
    expect(() => JSON.parse(original)).not.toThrow();
    expect(original).toBe(JSON.stringify(JSON.parse(original)));
    for (const req of firsts.slice(EXPAND_TURN)) expect(toolTexts(req).get(expandedIndex)).toBe(original);
    // Before the expand it was masked (that is what the model asked back for).
    expect(toolTexts(firsts[EXPAND_TURN - 1]!).get(expandedIndex)).toMatch(MARKER);
  });

  it('the cold turn after the expand masks other old outputs at depth, never the kept one', () => {
    const cold = firsts[COLD[1]! - 1]!;
    const prev = firsts[COLD[1]! - 2]!;
    const newlyMasked = [...toolTexts(cold)].filter(([i, t]) => MARKER.test(t) && !MARKER.test(toolTexts(prev).get(i) ?? ''));
    expect(newlyMasked.length).toBeGreaterThan(0);
    expect(newlyMasked.map(([i]) => i)).not.toContain(expandedIndex);
  });

  it('un-masking the kept message is the only rewrite of an already-sent message outside cold turns', () => {
    for (let k = 1; k < firsts.length; k++) {
      const t = k + 1;
      if (COLD.includes(t)) continue;
      const bust = prefixBust(firsts[k - 1]!.body, firsts[k]!.body);
      expect([t, bust]).toEqual([t, t === EXPAND_TURN + 1 ? expandedIndex : -1]);
    }
  });

  it('counts the bounce', async () => {
    const s = (await (await fetch(`${gateway.url}/stats`)).json()) as Record<string, number>;
    expect(s.bounces).toBe(1);
    expect(s.expand_rounds).toBe(1);
    expect(s.wasted_tokens).toBeGreaterThan(100);
  });
});
