// The ids a client hands the gateway: an explicit session id that is not path-safe, or names nothing
// (empty, blank, a JSON object without session_id), still names its session (hashed the same way
// on the chat route and on GET /expand, by header or query), and an expand id may be the
// bare HASH or the whole marker — through GET /expand and through the model's expand call.
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { markerIdOf } from '../support/forwarded-bytes';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { jsonScript, sha } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n';
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/;

let upstream: FakeUpstream;
let gateway: GatewayHarness;
const steps = agentSteps(8, 61);

beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  gateway = await startGateway(upstream.url, { CONFIG });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

/** Sends one six-output turn under `session` (header, or metadata.user_id when not ASCII) and returns a marker id it carried. */
async function markerUnder(session: string, asHeader: boolean): Promise<string> {
  const body = anthropicTurn(steps, 6, asHeader ? {} : { metadata: { user_id: session } });
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-x' };
  if (asHeader) headers['x-context-guru-session'] = session;
  const res = await fetch(`${gateway.url}/anthropic/v1/messages`, { method: 'POST', headers, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.text();
  const sent = upstream.requests[upstream.requests.length - 1]!.raw;
  return MARKER.exec(sent)![1]!;
}

function compactIfJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

const expand = (id: string, session: string) =>
  fetch(`${gateway.url}/expand?id=${encodeURIComponent(id)}&session=${encodeURIComponent(session)}`);

describe('explicit session ids', () => {
  const cases: Array<[string, string, boolean]> = [
    ['a path', '../../x', true],
    ['a branch name', 'proj/feature-1', true],
    ['unicode', 'セッション-ü', false],
    ['129 characters', 'x'.repeat(129), true],
    // Ids that name nothing: hashed whole on every route, never dropped for the content hash.
    ['empty', '', true],
    ['blank', ' ', true],
    ['a JSON object without session_id', '{"$gt": ""}', true],
  ];
  for (const [name, session, asHeader] of cases) {
    it(`${name}: GET /expand under the id the client sent finds the session's originals`, async () => {
      const id = await markerUnder(session, asHeader);
      const res = await expand(id, session);
      expect(res.status).toBe(200);
      expect(await markerIdOf(gateway.gw.keys, await res.text())).toBe(id);
      if (asHeader) {
        const viaHeader = await fetch(`${gateway.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': session } });
        expect(viaHeader.status).toBe(200);
      }
      // The content hash is not the session: another id cannot read it.
      expect((await expand(id, 'someone-else')).status).toBe(404);
    });
  }
});

describe('marker-shaped expand ids', () => {
  it('GET /expand accepts the whole marker, trimmed', async () => {
    const id = await markerUnder('marker-ids', true);
    const res = await expand(`  <<cg:${id}>> `, 'marker-ids');
    expect(res.status).toBe(200);
    expect(await markerIdOf(gateway.gw.keys, await res.text())).toBe(id);
    expect((await expand('<<cg:not a hash>>', 'marker-ids')).status).toBe(400);
  });

  it('the model calling expand with the whole marker gets the original', async () => {
    upstream.setScript((req) => {
      const script = jsonScript({ expand: true })(req);
      // The model copies the marker as it saw it, not just the HASH.
      if (script.kind === 'json') {
        const text = JSON.stringify(script.body)
          .replace(/"id":"([A-Za-z0-9_-]{16})"/g, '"id":"<<cg:$1>>"')
          .replace(/\\"id\\":\\"([A-Za-z0-9_-]{16})\\"/g, '\\"id\\":\\"<<cg:$1>>\\"');
        return { ...script, body: JSON.parse(text) as unknown };
      }
      return script;
    });
    try {
      const res = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x', 'x-context-guru-session': 'marker-call' },
        body: JSON.stringify(openaiTurn(steps, 6)),
      });
      const out = (await res.json()) as { choices: Array<{ message: { content: string } }> };
      const hash = /expanded sha256=([0-9a-f]{64})/.exec(out.choices[0]!.message.content)![1]!;
      expect(steps.some((s) => sha(s.output) === hash || sha(compactIfJson(s.output)) === hash)).toBe(true);
      // The continuation carried the model's call as it made it: the whole marker as the id.
      const continuation = upstream.requests[upstream.requests.length - 1]!.raw;
      expect(continuation).toMatch(/\\"id\\":\\"<<cg:[A-Za-z0-9_-]{16}>>\\"/);
    } finally {
      upstream.setScript(jsonScript({ expand: false }));
    }
  });
});
