// SIGTERM under a stream longer than DRAIN_DEADLINE_MS, on the gateway process: it stops accepting
// at once, lets the stream run until the deadline, ends it with Anthropic's `event: error`
// (gateway_draining) instead of a cut connection, flushes the write-behind queue (the turn's
// record and decisions are in Postgres afterwards) and exits 0 on its own, before any SIGKILL.
import { Client } from 'pg';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { anthropicTextSse } from '../../support/fake-upstream-sse';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { startPrivateRedis, startReplica, type PrivateRedis, type Replica } from '../../support/replicas';
import { agentSteps, anthropicTurn } from '../../support/transcripts';

jest.setTimeout(120_000);

const DRAIN_DEADLINE_MS = 1500;

let upstream: FakeUpstream;
let redis: PrivateRedis;
let db: FreshDatabase;
let gateway: Replica;

beforeAll(async () => {
  db = await freshDatabase('drain');
  redis = await startPrivateRedis();
  // ~75 chunks 100 ms apart: a stream of several seconds, far past the deadline.
  upstream = await startFakeUpstream(() => ({
    kind: 'sse',
    events: [anthropicTextSse('streamed answer '.repeat(300))],
    chunkSize: 64,
    delayMs: 100,
  }));
  gateway = await startReplica({
    REDIS_URL: redis.url,
    DATABASE_URL: db.url,
    ANTHROPIC_UPSTREAM: upstream.url,
    OPENAI_UPSTREAM: upstream.url,
    PRESET: 'agent',
    DRAIN_DEADLINE_MS: String(DRAIN_DEADLINE_MS),
  });
});

afterAll(async () => {
  await gateway?.stop('SIGKILL');
  await upstream?.close();
  await redis?.stop();
  await db?.drop();
});

it('ends the stream with the dialect error event at the deadline, flushes, and exits 0', async () => {
  const res = await fetch(`${gateway.url}/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'x-context-guru-session': 'draining' },
    body: JSON.stringify({ ...anthropicTurn(agentSteps(8, 3), 8), stream: true }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value);

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    gateway.proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const signalled = Date.now();
  gateway.proc.kill('SIGTERM');
  // Stops accepting: a new connection is refused while the stream still flows.
  await new Promise((r) => setTimeout(r, 200));
  await expect(fetch(`${gateway.url}/healthz`)).rejects.toThrow();

  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value);
  }
  const ended = Date.now();
  const last = text.trimEnd().split('\n\n').pop() ?? '';
  expect(last.startsWith('event: error\ndata: ')).toBe(true);
  const event = JSON.parse(last.slice('event: error\ndata: '.length)) as { type: string; error: { type: string; message: string } };
  expect(event).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  expect(event.error.message).toMatch(/shutting down/);
  expect(text).not.toContain('message_stop');

  expect(await exited).toEqual({ code: 0, signal: null });
  const exitedAt = Date.now();
  const pg = new Client({ connectionString: db.url });
  await pg.connect();
  try {
    const turns = await pg.query("SELECT n FROM session_turn WHERE session LIKE 'default:draining%'");
    expect(turns.rows.length).toBe(1);
  } finally {
    await pg.end();
  }
  console.log(
    `drain: SIGTERM -> stream ended ${ended - signalled} ms, -> process exited ${exitedAt - signalled} ms (deadline ${DRAIN_DEADLINE_MS} ms)`,
  );
});
