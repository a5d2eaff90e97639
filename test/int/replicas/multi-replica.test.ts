// Three gateway processes share one Redis and one Postgres. A session alternating between them
// stays byte-stable (no provider cache bust), a marker emitted by one replica resolves through
// another, a Redis FLUSHALL mid-session changes no forwarded byte and loses no marker, and a
// replica killed mid-stream leaves the others serving.
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { createHash } from 'node:crypto';
import { RawIndex } from '../../../apps/gateway/src/wire/json-scan';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../../support/fake-upstream';
import { anthropicTextSse } from '../../support/fake-upstream-sse';
import { startPrivateRedis, startReplica, type Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { agentSteps, anthropicTurn } from '../../support/transcripts';

jest.setTimeout(240_000);

const PG_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DB = `cg_replicas_${process.pid}_${Date.now()}`;
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;
const TURNS = 30;

let upstream: FakeUpstream;
let redis: { url: string; stop(): Promise<void> };
let replicas: Replica[] = [];
let dbUrl: string;

beforeAll(async () => {
  const admin = new Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB}`);
  await admin.end();
  const u = new URL(PG_URL);
  u.pathname = `/${DB}`;
  dbUrl = u.toString();
  redis = await startPrivateRedis();
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  const env = {
    REDIS_URL: redis.url,
    DATABASE_URL: dbUrl,
    OPENAI_UPSTREAM: upstream.url,
    ANTHROPIC_UPSTREAM: upstream.url,
    CONFIG: 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n',
  };
  // All three boot at once: migrations run under an advisory lock.
  replicas = await Promise.all([startReplica(env), startReplica(env), startReplica(env)]);
});

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await upstream?.close();
  await redis?.stop();
  const admin = new Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.end();
});

/** Raw bytes of each element of a body's `messages`. */
function rawMessages(raw: string): string[] {
  const index = new RawIndex(raw);
  const out: string[] = [];
  for (let i = 0; i < index.messageCount(); i++) {
    const s = index.message(i)!;
    out.push(raw.slice(s.start, s.end));
  }
  return out;
}

/** Raw bytes of the prompt's head: `tools` and `system`. */
function head(raw: string): string {
  const index = new RawIndex(raw);
  return ['tools', 'system']
    .map((k) => {
      const span = index.topLevel(k);
      return span ? raw.slice(span.start, span.end) : '';
    })
    .join('\u0000');
}

function post(r: Replica, body: unknown, session: string): Promise<Response> {
  return fetch(`${r.url}/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'x-context-guru-session': session },
    body: JSON.stringify(body),
  });
}

describe('three replicas sharing Redis and Postgres', () => {
  const steps = agentSteps(TURNS, 17);
  const sent: RecordedRequest[] = [];

  it('a 30-turn session alternating replicas stays byte-stable across a Redis FLUSHALL', async () => {
    upstream.requests.length = 0;
    for (let t = 1; t <= TURNS; t++) {
      if (t === 16) {
        // Give the write-behind archive its flush window, then lose every hot key.
        await new Promise((r) => setTimeout(r, 500));
        const r = new Redis(redis.url);
        await r.flushall();
        await r.quit();
      }
      const res = await post(replicas[t % 3]!, anthropicTurn(steps, t), 'replicated');
      expect(res.status).toBe(200);
      await res.text();
      sent.push(upstream.requests[upstream.requests.length - 1]!);
    }
    let markers = 0;
    for (let t = 1; t < sent.length; t++) {
      const prev = rawMessages(sent[t - 1]!.raw);
      const next = rawMessages(sent[t]!.raw);
      // The tool list opens the prompt: it never changes mid-session (the expand tool is there
      // from the first turn, whichever replica serves it, across the flush too).
      expect(head(sent[t]!.raw)).toBe(head(sent[0]!.raw));
      // Every message the provider already cached is re-sent byte for byte.
      expect(next.slice(0, prev.length)).toEqual(prev);
      markers += (sent[t]!.raw.match(MARKER) ?? []).length;
    }
    expect(markers).toBeGreaterThan(10);
    expect(head(sent[0]!.raw)).toContain('context_guru_expand');
  });

  it('every marker resolves through any replica, before and after the flush', async () => {
    const last = sent[sent.length - 1]!;
    const ids = [...new Set([...JSON.stringify(last.body.messages).matchAll(MARKER)].map((m) => m[1]!))];
    expect(ids.length).toBeGreaterThan(3);
    for (const [i, id] of ids.entries()) {
      const r = replicas[i % 3]!;
      const res = await fetch(`${r.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': 'replicated' } });
      expect(res.status).toBe(200);
      expect(
        createHash('sha256')
          .update(await res.text())
          .digest('hex')
          .slice(0, 16),
      ).toBe(id);
    }
  });

  it('a replica killed mid-stream leaves the others serving the session', async () => {
    upstream.setScript(() => ({ kind: 'sse', events: [anthropicTextSse('streamed answer '.repeat(200))], chunkSize: 64, delayMs: 20 }));
    try {
      const victim = replicas[1]!;
      const res = await post(victim, { ...anthropicTurn(steps, TURNS), stream: true }, 'replicated');
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      await reader.read(); // the stream is flowing
      await victim.stop('SIGKILL');
      await expect(
        (async () => {
          for (;;) {
            const { done } = await reader.read();
            if (done) return;
          }
        })(),
      ).rejects.toThrow();
      upstream.setScript(jsonScript({ expand: false }));
      for (const r of [replicas[0]!, replicas[2]!]) {
        const again = await post(r, anthropicTurn(steps, TURNS), 'replicated');
        expect(again.status).toBe(200);
        expect(((await again.json()) as { content: Array<{ text: string }> }).content[0]!.text).toMatch(/^answer to /);
      }
    } finally {
      upstream.setScript(jsonScript({ expand: false }));
    }
  });
});
