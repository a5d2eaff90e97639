// Without a tenant key, a session id derived from content (sha256 of system head and first user
// text, computable offline from a guessable first message) is not enough to read originals over
// HTTP (issue 29): GET /expand refuses it, while the in-band expand of that same session (which
// carries the whole conversation anyway) and an explicitly named session keep working.
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { markerIdOf } from '../support/forwarded-bytes';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { jsonScript, sha } from '../support/scripted-model';
import { agentSteps, openaiTurn } from '../support/transcripts';

const CONFIG = 'pipeline: [mask]\ncomponents:\n  mask: { keep_recent: 2 }\n';
const MARKER = /<<cg:([A-Za-z0-9_-]{16})>>/;

let upstream: FakeUpstream;
let gateway: GatewayHarness;
beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  gateway = await startGateway(upstream.url, { CONFIG });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

async function turn(seed: number, session?: string, expand = false): Promise<{ marker: string; answer: string }> {
  upstream.setScript(jsonScript({ expand }));
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: 'Bearer sk-x' };
  if (session) headers['x-context-guru-session'] = session;
  // Each seed its own first user text: its own derived session.
  const body = openaiTurn(agentSteps(8, seed), 6);
  body.messages[1] = { role: 'user', content: `Fix the failing parser tests (${seed}).` };
  const before = upstream.requests.length;
  const res = await fetch(`${gateway.url}/openai/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  const answer = await res.text();
  return { marker: MARKER.exec(upstream.requests[before]!.raw)![1]!, answer };
}

const expand = (id: string, session: string) => fetch(`${gateway.url}/expand?id=${id}&session=${encodeURIComponent(session)}`);

describe('derived session ids and GET /expand', () => {
  it('a keyless GET /expand under a derived session id is refused', async () => {
    const { marker } = await turn(91);
    // The id the gateway derived (what a probe computes offline from the first messages).
    const derived = gateway.gw.stats.timeline.recentSessions()[0]!.session;
    expect(derived).toMatch(/^[0-9a-f]{16}$/);
    const res = await expand(marker, derived);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('expand_not_found');
    expect(body.error.message).toMatch(/derived from its content/);
  });

  it("the derived session's own in-band expand still resolves", async () => {
    const { answer } = await turn(92, undefined, true);
    const hash = /expanded sha256=([0-9a-f]{64})/.exec(answer)![1]!;
    expect(agentSteps(8, 92).some((s) => sha(s.output) === hash)).toBe(true);
  });

  it('an explicitly named session still expands over HTTP without a key', async () => {
    const { marker } = await turn(93, 'explicit-session-93-f0e1d2');
    const res = await expand(marker, 'explicit-session-93-f0e1d2');
    expect(res.status).toBe(200);
    expect(await markerIdOf(gateway.gw.keys, await res.text())).toBe(marker);
  });
});
