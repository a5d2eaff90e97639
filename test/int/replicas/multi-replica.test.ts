// Three gateway processes share one Redis and one Postgres. A session alternating between them
// stays byte-stable (no provider cache bust), a marker emitted by one replica resolves through
// another, a Redis FLUSHALL mid-session changes no forwarded byte and loses no marker, and a
// replica killed mid-stream leaves the others serving. A session whose model expands in-band and
// beside its own calls keeps the same guarantees: the trails come back from Postgres after the flush.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { REWRITE_HEADER } from '../../../apps/gateway/src/proxy/chat/respond.step';
import { MARKER, deploymentKeys, head, markerIdOf, rawMessages, withoutBreakpoints } from '../../support/forwarded-bytes';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../../support/fake-upstream';
import { anthropicTextSse } from '../../support/fake-upstream-sse';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { startPrivateRedis, startReplica, type Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { answerContent, EchoingClient, expandingModel, type ExpandWay } from '../../support/expand-session';
import type { ScriptedReply } from '../../support/fake-upstream';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { agentSteps, anthropicTurn } from '../../support/transcripts';

jest.setTimeout(240_000);

const TURNS = 30;

let upstream: FakeUpstream;
let redis: { url: string; stop(): Promise<void> };
let replicas: Replica[] = [];
let db: FreshDatabase;
let dbUrl: string;
let env: Record<string, string>;
/** The replicas' shared CG_ENCRYPTION_KEY, and their key ring read from outside: what marker ids are keyed by. */
const KEK = randomBytes(32).toString('base64');
let kek: ReturnType<typeof deploymentKeys>;

beforeAll(async () => {
  db = await freshDatabase('replicas');
  dbUrl = db.url;
  redis = await startPrivateRedis();
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  env = {
    REDIS_URL: redis.url,
    DATABASE_URL: dbUrl,
    OPENAI_UPSTREAM: upstream.url,
    ANTHROPIC_UPSTREAM: upstream.url,
    CG_ENCRYPTION_KEY: KEK,
    CONFIG: 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n',
  };
  // All three boot at once: migrations run under an advisory lock.
  replicas = await Promise.all([startReplica(env), startReplica(env), startReplica(env)]);
  kek = deploymentKeys(dbUrl, KEK);
});

afterAll(async () => {
  await kek?.close();
  await Promise.all(replicas.map((r) => r.stop()));
  await upstream?.close();
  await redis?.stop();
  await db?.drop();
});

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
    const rewrites: Array<string | null> = [];
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
      rewrites.push(res.headers.get(REWRITE_HEADER));
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
      // Every message the provider already cached is re-sent byte for byte, unless the turn
      // announced a planned (priced) rewrite from exactly the first message it changed.
      const at = prev.findIndex((m, k) => next[k] !== m);
      expect(rewrites[t]).toBe(at >= 0 ? `planned; from=${at}` : null);
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
      expect(await markerIdOf(kek.keys, await res.text())).toBe(id);
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

describe('expand trails across three replicas', () => {
  const steps = agentSteps(24, 23);
  const client = new EchoingClient(steps);
  // Originals asked for in-band (streamed and not) and beside the step's own call, before and after the flush.
  const expandAt = new Map<number, ExpandWay>([
    [5, 'in-band'],
    [8, 'beside'],
    [13, 'in-band'],
    [17, 'beside'],
    [20, 'in-band'],
  ]);
  const firsts: RecordedRequest[] = [];

  it('a session that expands alternating replicas, across a FLUSHALL and a replica killed mid-stream, never changes a forwarded byte', async () => {
    upstream.setScript(expandingModel(steps, expandAt));
    // A fresh third replica (the earlier test killed one): it serves turns until it is killed too.
    const third = await startReplica(env);
    let live = [replicas[0]!, replicas[2]!, third];
    try {
      for (let t = 1; t <= steps.length; t++) {
        if (t === 12) {
          await new Promise((r) => setTimeout(r, 500));
          const r = new Redis(redis.url);
          await r.flushall();
          await r.quit();
        }
        const stream = t % 2 === 0;
        if (t === 18) {
          // The third replica dies while it streams a slow answer; the client retries the turn elsewhere.
          upstream.setScript((req) => ({ ...expandingModel(steps, expandAt)(req), chunkSize: 16, delayMs: 25 }) as ScriptedReply);
          const res = await post(third, client.body(true), 'expand-replicated');
          const reader = res.body!.getReader();
          await reader.read();
          await third.stop('SIGKILL');
          live = [replicas[0]!, replicas[2]!];
          await expect(
            (async () => {
              for (;;) if ((await reader.read()).done) return;
            })(),
          ).rejects.toThrow();
          upstream.setScript(expandingModel(steps, expandAt));
        }
        const at = upstream.requests.length;
        const res = await post(live[t % live.length]!, client.body(stream), 'expand-replicated');
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(text).not.toContain('context_guru_expand');
        firsts.push(upstream.requests[at]!);
        client.answer(answerContent(text));
      }
    } finally {
      upstream.setScript(jsonScript({ expand: false }));
      await third.stop();
    }
    for (let t = 1; t < firsts.length; t++) {
      expect(validateProviderShape('anthropic', firsts[t]!.body)).toEqual([]);
      expect(head(firsts[t]!.raw)).toBe(head(firsts[0]!.raw));
      const prev = rawMessages(firsts[t - 1]!.raw).map(withoutBreakpoints);
      expect([t + 1, rawMessages(firsts[t]!.raw).map(withoutBreakpoints).slice(0, prev.length)]).toEqual([t + 1, prev]);
    }
  });

  it('the model kept every original it asked for: each expand call answered in place with the stashed bytes on the last turn', async () => {
    const last = firsts[firsts.length - 1]!;
    const blocks = (last.body.messages as Array<{ content: unknown }>).flatMap((m) =>
      Array.isArray(m.content)
        ? (m.content as Array<{
            type: string;
            id?: string;
            name?: string;
            input?: { id: string };
            tool_use_id?: string;
            content?: unknown;
          }>)
        : [],
    );
    const calls = blocks.filter((b) => b.type === 'tool_use' && b.name === 'context_guru_expand');
    expect(calls).toHaveLength(expandAt.size);
    for (const [i, c] of calls.entries()) {
      const answers = blocks.filter((b) => b.type === 'tool_result' && b.tool_use_id === c.id);
      expect(answers).toHaveLength(1);
      const res = await fetch(`${[replicas[0]!, replicas[2]!][i % 2]!.url}/expand?id=${c.input!.id}`, {
        headers: { 'x-context-guru-session': 'expand-replicated' },
      });
      expect(answers[0]!.content).toBe(await res.text());
    }
  });
});
