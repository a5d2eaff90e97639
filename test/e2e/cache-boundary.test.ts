// The per-session cache boundary through the real gateway: a bypassed turn still advances it, a
// shorter transcript resets it, the agent's own summarisation request is forwarded untouched, and
// a side request sharing the session id (a title or quota probe, a sub-agent) does not move the
// main conversation's boundary.
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { PromptCacheSim, cachingScript, prefixBust } from '../support/prompt-cache';
import { jsonScript } from '../support/scripted-model';
import { agentSteps, anthropicTurn } from '../support/transcripts';

const CONFIG = 'pipeline: [format, mask]\ncomponents:\n  mask: { keep_recent: 1, min_tokens: 50 }\n';
const MASKED = /^\[older tool output masked/;
const COMPACT_REQUEST =
  'Your task is to create a detailed summary of the conversation so far, paying close attention to the explicit requests and your previous actions.';

let upstream: FakeUpstream;
let gateway: GatewayHarness;
let now = 1_700_000_000_000;

beforeAll(async () => {
  upstream = await startFakeUpstream(cachingScript(new PromptCacheSim({ now: () => now }), jsonScript({ expand: false })));
  // The blanket tail gate under test: priced rewrites off (test/e2e/cache-priced.test.ts covers them).
  gateway = await startGateway(upstream.url, { CONFIG, REWRITE_PAYBACK_TURNS: '0' }, { clock: { now: () => now } });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

/** Only steps with large outputs, so every older one is a mask candidate. */
const steps = agentSteps(120, 41).filter((s) => s.output.length > 1500);

async function send(session: string, body: unknown, headers: Record<string, string> = {}): Promise<RecordedRequest> {
  now += 15_000;
  const at = upstream.requests.length;
  const res = await fetch(`${gateway.url}/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': `sk-ant-${session}`, 'x-context-guru-session': session, ...headers },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  await res.json();
  return upstream.requests[at]!;
}

/** Text of each tool_result in a forwarded body, in order. */
function results(req: RecordedRequest): string[] {
  const out: string[] = [];
  for (const m of req.body.messages as Array<{ content: unknown }>) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Array<{ type: string; content?: unknown }>) if (b.type === 'tool_result') out.push(String(b.content));
  }
  return out;
}

const stats = async () => (await (await fetch(`${gateway.url}/stats`)).json()) as Record<string, number>;

describe('the cache boundary', () => {
  it('a bypassed turn advances it: what that turn forwarded is cached on the next turn', async () => {
    const s = steps.slice(0, 8);
    for (let t = 1; t <= 5; t++) await send('bypass', anthropicTurn(s, t));
    const bypassed = await send('bypass', anthropicTurn(s, 7), { 'x-context-guru-bypass': 'true' });
    expect(bypassed.raw).toBe(JSON.stringify(anthropicTurn(s, 7)));
    const next = results(await send('bypass', anthropicTurn(s, 8))).map((x) => MASKED.test(x));
    // Outputs 6 and 7 arrived on the bypassed turn: now inside the cached prefix, never newly
    // masked (with the boundary left at turn 5 they would be); 8 is the newest (keep_recent 1).
    expect(next).toEqual([false, false, false, false, false, false, false, false]);
  });

  it('a shorter transcript resets it (counted in compaction_resets) and older outputs may be masked', async () => {
    const s = steps.slice(8, 20);
    for (let t = 1; t <= 10; t++) {
      const r = results(await send('compact', anthropicTurn(s, t)));
      // Warm turns: every output was in the tail once, within keep_recent, so none is ever masked.
      expect(r.some((x) => MASKED.test(x))).toBe(false);
    }
    const before = await stats();
    // The agent dropped its oldest exchanges, keeping the task message: same conversation, shorter.
    const truncated = anthropicTurn(s, 10);
    truncated.messages.splice(1, 14);
    const r = results(await send('compact', truncated));
    expect((await stats()).compaction_resets).toBe(before.compaction_resets! + 1);
    expect(r.map((x) => MASKED.test(x))).toEqual([true, true, false]);
  });

  it('a compaction that rewrites the first message starts a new conversation: nothing is cached', async () => {
    const s = steps.slice(44, 56);
    for (let t = 1; t <= 10; t++) await send('summary-restart', anthropicTurn(s, t));
    const restarted = anthropicTurn(s.slice(7, 10), 3);
    (restarted.messages[0] as { content: string }).content =
      'This session is being continued from a previous conversation. Summary: parser tests fixed.';
    expect(results(await send('summary-restart', restarted)).map((x) => MASKED.test(x))).toEqual([true, true, false]);
  });

  it('the agent’s own summarisation request is forwarded byte-identical, without the expand tool', async () => {
    const s = steps.slice(20, 32);
    // A first turn that already holds four outputs: nothing is cached, so mask offloads and the
    // expand tool is advertised from then on.
    const first = await send('summarise', anthropicTurn(s, 4));
    expect(results(first).filter((x) => MASKED.test(x))).toHaveLength(3);
    expect(JSON.stringify(first.body.tools)).toContain('context_guru_expand');
    const body = anthropicTurn(s, 4);
    body.messages.push({ role: 'assistant', content: [{ type: 'text', text: 'Done with the parser.' }] });
    body.messages.push({ role: 'user', content: [{ type: 'text', text: COMPACT_REQUEST }] });
    const before = await stats();
    const sent = await send('summarise', body);
    expect(sent.raw).toBe(JSON.stringify(body));
    expect(JSON.stringify(sent.body.tools)).not.toContain('context_guru_expand');
    expect((await stats()).bypassed).toBe(before.bypassed! + 1);
  });

  it('with no header, Claude Code’s metadata.user_id JSON names the session', async () => {
    const s = steps.slice(56, 62);
    const sessionId = '7d1c2f0e-5b7a-4c1e-9c3d-2f6a8b9e0c11';
    const metadata = { user_id: JSON.stringify({ device_id: 'a1b2c3', account_uuid: '', session_id: sessionId }) };
    const noHeader = async (t: number) => {
      now += 15_000;
      const at = upstream.requests.length;
      const res = await fetch(`${gateway.url}/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-meta' },
        body: JSON.stringify(anthropicTurn(s, t, { metadata })),
      });
      expect(res.status).toBe(200);
      await res.json();
      return upstream.requests[at]!;
    };
    const first = await noHeader(4);
    const second = await noHeader(5);
    expect(prefixBust(first.body, second.body)).toBe(-1);
    const id = /<<cg:([0-9a-f]{16})>>/.exec(JSON.stringify(second.body.messages))![1]!;
    const mine = await fetch(`${gateway.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': sessionId } });
    expect(mine.status).toBe(200);
    await mine.text();
    const other = await fetch(`${gateway.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': 'another-session' } });
    expect(other.status).toBe(404);
    await other.text();
  });

  it('a side request sharing the session id does not move the main conversation’s boundary', async () => {
    const s = steps.slice(32, 44);
    const main: RecordedRequest[] = [];
    for (let t = 1; t <= 10; t++) {
      main.push(await send('threads', anthropicTurn(s, t)));
      // Claude Code probes with tiny one-message requests under the same session id.
      await send('threads', {
        model: 'claude-haiku-4-5',
        max_tokens: 64,
        system: 'Summarize the topic in 5 words.',
        messages: [{ role: 'user', content: `turn ${t}` }],
      });
    }
    for (let k = 1; k < main.length; k++) expect([k, prefixBust(main[k - 1]!.body, main[k]!.body)]).toEqual([k, -1]);
    for (const r of main) expect(results(r).some((x) => MASKED.test(x))).toBe(false);
  });
});
