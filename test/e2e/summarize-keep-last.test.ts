// summarize through the real gateway over HTTP, whole sessions in both dialects: on every turn a
// summary is forwarded, the client's last keep_last messages (counted as the client sent them, so
// an Anthropic user turn with two tool_results and a reminder is one message) reach the provider
// byte-identical, the client's own cache_control included, and the body passes the shape
// validator. The sessions rotate the shapes a kept tail can begin with (a tool_result / `tool`
// message, an assistant turn holding tool_use / tool_calls, a plain user text turn, parallel
// calls, images, an image-only result, thinking), run against two replicas sharing Redis and
// Postgres, re-send a turn (turn cache hit), pause past the cache TTL and lose Redis mid-session
// (the checkpoint comes back from Postgres), under several keep_last / min_tokens / trigger /
// resummarize_tokens settings. Issue 15: an Anthropic tail with parallel results lost a message.
import Redis from 'ioredis';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeModel, type FakeModelServer } from '../support/fake-model-server';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { startPrivateRedis } from '../support/replicas';
import { jsonScript } from '../support/scripted-model';
import { clientBody, sessionTranscripts, type ContentStyle, type Dialect } from '../support/summarize-sessions';

jest.setTimeout(120_000);

type Json = Record<string, unknown>;

const SETTINGS: Array<Record<string, unknown>> = [
  { keep_last: 1, min_tokens: 0, resummarize_tokens: 1500, trigger: { min_messages: 4 } },
  { keep_last: 2, min_tokens: 500, resummarize_tokens: 3000, trigger: { min_request_tokens: 3000 } },
  { keep_last: 3 },
  // A fresh summary almost every turn: the newest exchange (parallel results, a result beside a
  // reminder) is what the kept tail ends with on a turn that cuts anew, not one a replay covers.
  { keep_last: 3, min_tokens: 0, resummarize_tokens: 800 },
  { keep_last: 4, min_tokens: 0, resummarize_tokens: 2000 },
  { keep_last: 5, min_tokens: 200, resummarize_tokens: 1200, trigger: { min_messages: 9 } },
];
const SESSIONS: Array<{ dialect: Dialect; style: ContentStyle }> = [
  { dialect: 'anthropic', style: 'blocks' },
  { dialect: 'anthropic', style: 'strings' },
  { dialect: 'openai', style: 'strings' },
  { dialect: 'openai', style: 'blocks' },
];
const TURNS = 12;
/** Turn (1-based) before which the session idles past the 5-minute cache TTL. */
const COLD_AT = 7;
/** Turn before which Redis loses everything: the checkpoint must come back from Postgres. */
const FLUSH_AT = 10;
/** Turns re-sent unchanged right after their first send (the turn cache's hit path). */
const RESENT = new Set([5, 11]);
const SUMMARY_TEXT = /=== History Summary ===(?:[^"\\]|\\.)*/;

let model: FakeModelServer;
let upstream: FakeUpstream;
let redis: { url: string; stop(): Promise<void> };
let flusher: Redis;
let db: FreshDatabase;
let skew = 0;
const clock = { now: () => Date.now() + skew };

/** What one summarized turn looked like, for the coverage the matrix claims. */
interface Seen {
  tailStartsWith: string;
  afterFlush: boolean;
  replayed: boolean;
}
const seen: Seen[] = [];
let modelCallsPerSession: number[] = [];

beforeAll(async () => {
  let calls = 0;
  model = await startFakeModel(() => ({
    text: `<summary>Summary ${++calls}: read the parser and the HTTP client; parse() still fails.</summary>`,
  }));
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  redis = await startPrivateRedis();
  flusher = new Redis(redis.url);
  db = await freshDatabase('summ_keep');
});

afterAll(async () => {
  flusher?.disconnect();
  await redis?.stop();
  await upstream?.close();
  await model?.close();
  await db?.drop();
});

async function send(gw: GatewayHarness, dialect: Dialect, session: string, body: Json): Promise<RecordedRequest> {
  const path = dialect === 'openai' ? '/openai/v1/chat/completions' : '/anthropic/v1/messages';
  const auth: Record<string, string> =
    dialect === 'openai' ? { authorization: 'Bearer sk-caller' } : { 'x-api-key': 'sk-ant-caller', 'anthropic-version': '2023-06-01' };
  const before = upstream.requests.length;
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-context-guru-session': session, ...auth },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  const forwarded = upstream.requests.slice(before);
  expect(forwarded).toHaveLength(1);
  return forwarded[0]!;
}

/** How the kept tail begins, as the client sent it. */
function tailKind(m: Json): string {
  const c = m.content;
  if (m.role === 'tool') return 'tool message';
  if (m.role === 'assistant') {
    const calls = Array.isArray(m.tool_calls) || (Array.isArray(c) && c.some((b: Json) => b.type === 'tool_use'));
    return calls ? 'assistant with calls' : 'assistant text';
  }
  return Array.isArray(c) && c.some((b: Json) => b.type === 'tool_result') ? 'tool_result turn' : 'user text';
}

/** The assertions of one forwarded turn; returns whether it carried a summary. */
function checkTurn(dialect: Dialect, keep: number, body: Json, sent: RecordedRequest): boolean {
  expect(validateProviderShape(dialect, sent.body)).toEqual([]);
  if (!SUMMARY_TEXT.test(sent.raw)) {
    // Not summarized: the messages go out as received (the expand tool may be appended to tools).
    expect(sent.raw.includes(`"messages":${JSON.stringify(body.messages)}`)).toBe(true);
    return false;
  }
  const client = body.messages as Json[];
  const out = sent.body.messages as Json[];
  const tail = client.slice(-keep).map((m) => JSON.stringify(m));
  expect(out.slice(-tail.length).map((m) => JSON.stringify(m))).toEqual(tail);
  // Bytes, not just values: the tail closes the forwarded messages array exactly as received.
  expect(sent.raw.includes(`${tail.join(',')}]`)).toBe(true);
  expect(out.length).toBeLessThan(client.length);
  return true;
}

describe.each(SETTINGS.map((s, i) => [JSON.stringify(s), s, i] as const))('summarize %s', (_label, settings, index) => {
  let replicas: GatewayHarness[] = [];

  beforeAll(async () => {
    const config = JSON.stringify({ pipeline: ['summarize'], components: { summarize: { ...settings, model: { source: 'config' } } } });
    const env = {
      CONFIG: config,
      REDIS_URL: redis.url,
      HOT_STORE: 'redis',
      DATABASE_URL: db.url,
      DURABLE_STORE: 'postgres',
      REDIS_PREFIX: `keep${index}:`,
      CHEAP_MODEL: 'claude-haiku-4-5',
      CHEAP_MODEL_PROVIDER: 'anthropic',
      CHEAP_MODEL_BASE: model.url,
      CHEAP_MODEL_KEY: 'sk-cheap',
    };
    replicas = [await startGateway(upstream.url, env, { clock }), await startGateway(upstream.url, env, { clock })];
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
  });

  it.each(SESSIONS.map((s, k) => [`${s.dialect}/${s.style}`, s, k] as const))('%s', async (_name, s, k) => {
    const keep = settings.keep_last as number;
    const session = `keep-${index}-${k}`;
    const transcripts = sessionTranscripts({ ...s, turns: TURNS, seed: 40 + index * 4 + k, offset: index + k });
    const callsAtStart = model.calls.length;
    let summarized = 0;
    let prevSummary: string | null = null;
    let prevCalls = model.calls.length;
    for (let t = 1; t <= TURNS; t++) {
      if (t === COLD_AT) skew += 10 * 60_000;
      if (t === FLUSH_AT) await flusher.flushall();
      const body = clientBody(s.dialect, transcripts[t - 1]!, 1);
      const gw = replicas[t % 2]!;
      const sent = await send(gw, s.dialect, session, body);
      const hasSummary = checkTurn(s.dialect, keep, body, sent);
      const summary = SUMMARY_TEXT.exec(sent.raw)?.[0] ?? null;
      const called = model.calls.length > prevCalls;
      // No model call: the checkpoint is replayed byte-identically (after the flush, from Postgres).
      if (!called && prevSummary !== null) expect(summary).toBe(prevSummary);
      if (hasSummary) {
        summarized++;
        const client = body.messages as Json[];
        seen.push({ tailStartsWith: tailKind(client[client.length - keep]!), afterFlush: t === FLUSH_AT, replayed: !called });
      }
      if (RESENT.has(t)) {
        const again = await send(gw, s.dialect, session, body);
        expect(again.raw).toBe(sent.raw);
      }
      prevSummary = summary;
      prevCalls = model.calls.length;
    }
    expect(summarized).toBeGreaterThanOrEqual(TURNS / 2);
    modelCallsPerSession = [...modelCallsPerSession, model.calls.length - callsAtStart];
  });
});

it('the matrix covered what it claims', () => {
  const kinds = new Set(seen.map((x) => x.tailStartsWith));
  for (const k of ['tool message', 'assistant with calls', 'user text', 'tool_result turn']) expect(kinds).toContain(k);
  // Summaries rolled forward within a session, and a checkpoint came back from Postgres after the flush.
  expect(Math.max(...modelCallsPerSession)).toBeGreaterThan(1);
  expect(seen.some((x) => x.afterFlush && x.replayed)).toBe(true);
});
