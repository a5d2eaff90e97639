// A canary secret in one tenant's tool output reaches no other caller on any route (issue 29):
// the embedded process (`npm start`) with three tenants — `default` (keyless), acme and beta.
// acme's agent reads a `.env` whose first line is the canary; then every route is asked by every
// other caller: /stats, /readyz, /metrics, GET /expand, and an in-band expand naming acme's id.
import { embeddedAdmin, useEmbedded } from '../support/embedded-harness';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { markerIdOf } from '../support/forwarded-bytes';
import { openaiJson } from '../support/scripted-model';

jest.setTimeout(60_000);

const ADMIN_TOKEN = 'tenant-canary-admin-token';
const OPS_TOKEN = 'tenant-canary-ops-token-0123456789';
const CANARY = 'DATABASE_URL=postgres://admin:canary-29a-s3cret@db.internal/prod';
const ENV_FILE = `${CANARY}\n${Array.from({ length: 80 }, (_, i) => `SETTING_${i}=value-${i}`).join('\n')}`;
const DOCUMENT = { pipeline: ['cmdfilter', 'mask'], components: { mask: { keep_recent: 1 } } };

let upstream: FakeUpstream;
/** The id the model asks for in-band on the next request (undefined: it answers). */
let askFor: string | undefined;
/** acme's marker id for the canary output (keyed: docs/security.md). */
let CANARY_ID = '';

function script(req: RecordedRequest): ScriptedReply {
  const messages = req.body.messages as Array<{ role: string; content?: unknown; tool_call_id?: string }>;
  const last = messages[messages.length - 1]!;
  if (last.role === 'tool' && last.tool_call_id === 'call_canary') return openaiJson(`got: ${String(last.content)}`);
  if (askFor) return openaiJson('', { id: 'call_canary', name: 'context_guru_expand', args: JSON.stringify({ id: askFor }) });
  return openaiJson('ok');
}

beforeAll(async () => {
  upstream = await startFakeUpstream(script);
});
afterAll(async () => upstream.close());

/** An agent turn: `cat .env` (the canary), then two more outputs so the first is masked. */
function turn(first = ENV_FILE) {
  const outputs: Array<[string, string]> = [
    ['cat .env', first],
    ['ls -la', Array.from({ length: 40 }, (_, i) => `-rw-r--r-- 1 dev dev ${i * 10} file_${i}.ts`).join('\n')],
    ['git status', 'On branch main\nnothing to commit, working tree clean'],
  ];
  const messages: Array<Record<string, unknown>> = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Check the configuration.' },
  ];
  outputs.forEach(([command, output], i) => {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: output });
  });
  return { model: 'gpt-4o', messages, tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }] };
}

describe('a canary in one tenant reaches no other caller', () => {
  const running = useEmbedded('tenant-canary', () => ({ ADMIN_TOKEN, OPS_TOKEN, OPENAI_UPSTREAM: upstream.url }));
  const keys: Record<string, string> = {};
  const admin = embeddedAdmin(running, ADMIN_TOKEN);
  const get = (p: string, headers: Record<string, string> = {}) => fetch(running().gatewayUrl + p, { headers });
  const chat = async (headers: Record<string, string>, body: unknown) => {
    const res = await fetch(`${running().gatewayUrl}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x', ...headers },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return res.text();
  };
  /** Every caller but acme: keyless (the default tenant) and beta's key. */
  const others = (): Array<[string, Record<string, string>]> => [
    ['keyless', {}],
    ['beta', { 'x-context-guru-key': keys.beta! }],
  ];

  beforeAll(async () => {
    for (const id of ['default', 'acme', 'beta']) {
      const key = await admin.tenantWithKey(id, DOCUMENT);
      if (key) keys[id] = key;
    }
    askFor = undefined;
    CANARY_ID = await markerIdOf(running().gw.keys, ENV_FILE, 'acme');
    await chat({ 'x-context-guru-key': keys.acme!, 'x-context-guru-session': 'acme-1' }, turn());
    // The canary was stashed (its marker left) and missed by every filter (the selector ledger saw it).
    expect(upstream.requests[upstream.requests.length - 1]!.raw).toContain(`<<cg:${CANARY_ID}>>`);
    // The other tenants' sessions, with markers of their own (so the expand tool is offered).
    for (const [, headers] of others()) await chat({ ...headers, 'x-context-guru-session': 'other-1' }, turn('PATH=/usr/bin\n'.repeat(40)));
  });

  it("the owner's own /stats has its selector miss (the ledger under test is fed)", async () => {
    const own = await (await get('/stats', { 'x-context-guru-key': keys.acme! })).text();
    expect(own).toContain('DATABASE_URL=postgres://admin:canary');
  });

  it('/stats of every other caller holds no canary', async () => {
    for (const [who, headers] of others()) {
      const res = await get('/stats', headers);
      expect([who, res.status]).toEqual([who, 200]);
      expect([who, await res.text()]).not.toEqual([who, expect.stringContaining('canary-29a')]);
    }
  });

  it('/readyz without the ops token names no tenant; with it, every tenant', async () => {
    const bare = await get('/readyz');
    expect(bare.status).toBe(200);
    const text = await bare.text();
    for (const id of ['acme', 'beta']) expect(text).not.toContain(id);
    const detailed = await (await get('/readyz', { authorization: `Bearer ${OPS_TOKEN}` })).text();
    for (const id of ['acme', 'beta']) expect(detailed).toContain(id);
  });

  it('/metrics answers only the ops token', async () => {
    for (const [, headers] of others()) expect((await get('/metrics', headers)).status).toBe(401);
    expect((await get('/metrics', { authorization: 'Bearer wrong-token' })).status).toBe(401);
    const ok = await get('/metrics', { authorization: `Bearer ${OPS_TOKEN}` });
    expect(ok.status).toBe(200);
    expect(await ok.text()).not.toContain('canary-29a');
  });

  it('GET /expand of the canary id is 404 for every other caller, under any session name', async () => {
    for (const [, headers] of others()) {
      for (const session of ['acme-1', 'other-1']) {
        const res = await get(`/expand?id=${CANARY_ID}&session=${session}`, headers);
        expect(res.status).toBe(404);
        expect(await res.text()).not.toContain('canary-29a');
      }
    }
  });

  it("an in-band expand naming acme's id gives every other caller 'unavailable'", async () => {
    askFor = CANARY_ID;
    try {
      for (const [, headers] of others()) {
        const before = upstream.requests.length;
        const answer = await chat({ ...headers, 'x-context-guru-session': 'other-1' }, turn('PATH=/usr/bin\n'.repeat(40)));
        const sent = upstream.requests.slice(before).map((r) => r.raw);
        expect(sent).toHaveLength(2);
        expect(sent[1]).toContain(`original for id ${CANARY_ID} is no longer available`);
        expect(sent.join('') + answer).not.toContain('canary-29a');
      }
    } finally {
      askFor = undefined;
    }
  });
});
