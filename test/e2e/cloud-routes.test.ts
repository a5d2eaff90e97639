// The Bedrock and Vertex routes through the real gateway, against a fake Bedrock that verifies the
// gateway's SigV4 signature with a known test key and streams in the binary event stream framing,
// and a fake Vertex that checks the bearer token a fake token endpoint issued for a service-account
// key. What the Anthropic route does holds here too: tool outputs are compressed, an expand call is
// withheld, resolved and stitched into the same stream (on Bedrock: one event stream of valid
// frames), a session busts no cache, and every body sent passes the cloud's shape validator.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateCloudShape } from '../../apps/gateway/src/cloud/cloud-shape';
import type { CloudProvider } from '../../apps/gateway/src/cloud/cloud-path';
import {
  bedrockException,
  bedrockFrames,
  cloudScript,
  framesToSse,
  readFrames,
  startFakeTokenEndpoint,
  TEST_KEY,
  TEST_REGION,
  type CloudWatch,
  type FakeTokenEndpoint,
} from '../support/fake-cloud';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { anthropicExpandSse, anthropicTextSse } from '../support/fake-upstream-sse';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { cachingScript, prefixBust, PromptCacheSim, type Bill, type BilledRequest } from '../support/prompt-cache';
import { anthropicJson, answerText, readTurn, sha } from '../support/scripted-model';
import { anthropicFinal } from '../support/sdk-parse';
import { agentSteps, anthropicTurn } from '../support/transcripts';

// cacheinject places breakpoints, so the session's prompt is cached and the tail gate holds.
const CONFIG = 'pipeline: [format, dedup, collapse, mask, cacheinject]\ncomponents:\n  mask: { keep_recent: 3 }\n';
const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const VERTEX_MODEL = 'claude-sonnet-4-5@20250929';
type Mode = 'text' | 'expand_first' | 'text_then_expand' | 'exception';

let upstream: FakeUpstream;
let gateway: GatewayHarness;
let tokens: FakeTokenEndpoint;
let mode: Mode = 'text';
const log: BilledRequest[] = [];
const watch: CloudWatch = { problems: [], sent: [], vertexToken: () => tokens.issued() };
let seed = 301;

const usageOf = (b: Bill) => ({
  input_tokens: b.fresh,
  cache_read_input_tokens: b.cacheRead,
  cache_creation_input_tokens: b.cacheWrite,
  output_tokens: 40,
});
const streams = (r: RecordedRequest) => r.path.endsWith('/invoke-with-response-stream') || r.path.endsWith(':streamRawPredict');

function model(r: RecordedRequest, bill: Bill): ScriptedReply {
  const turn = readTurn(r);
  const text = answerText(turn);
  const wantsExpand =
    turn.advertised && turn.markerId !== undefined && turn.expandResults.length === 0 && mode !== 'text' && mode !== 'exception';
  if (!streams(r))
    return wantsExpand
      ? anthropicJson('', { id: 'toolu_01JsonExpand', name: 'context_guru_expand', input: { id: turn.markerId } })
      : anthropicJson(text);
  const usage = usageOf(bill);
  if (mode === 'exception') {
    // The answer's first events, whole frames, then Bedrock's exception instead of the rest.
    const head = anthropicTextSse(text, { usage }).split('\n\n').slice(0, 3).join('\n\n') + '\n\n';
    const body = Buffer.concat([bedrockFrames(head), bedrockException('throttlingException', 'Too many tokens, please wait')]);
    return { kind: 'bytes', contentType: 'application/vnd.amazon.eventstream', body, chunkSize: 61 };
  }
  if (!wantsExpand) return { kind: 'sse', events: [anthropicTextSse(text, { usage })] };
  const lead = mode === 'text_then_expand' ? 'Let me read the whole log first.' : undefined;
  return { kind: 'sse', events: [anthropicExpandSse([turn.markerId!], { usage, lead })] };
}

beforeAll(async () => {
  tokens = await startFakeTokenEndpoint();
  const dir = mkdtempSync(join(tmpdir(), 'cg-cloud-'));
  writeFileSync(join(dir, 'key.json'), tokens.keyFile);
  upstream = await startFakeUpstream(cloudScript(cachingScript(new PromptCacheSim(), model, log), watch));
  gateway = await startGateway(upstream.url, {
    CONFIG,
    BEDROCK_UPSTREAM: upstream.url,
    AWS_REGION: TEST_REGION,
    AWS_ACCESS_KEY_ID: TEST_KEY.id,
    AWS_SECRET_ACCESS_KEY: TEST_KEY.secret,
    AWS_SESSION_TOKEN: TEST_KEY.token,
    VERTEX_UPSTREAM: upstream.url,
    GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'key.json'),
  });
});
afterAll(async () => {
  // Every body the gateway sent a cloud — continuations included — is one that cloud accepts.
  for (const r of upstream.requests) expect(validateCloudShape(r.path.startsWith('/model/') ? 'bedrock' : 'vertex', r.body)).toEqual([]);
  await gateway.close();
  await upstream.close();
  await tokens.close();
});
beforeEach(() => {
  mode = 'text';
  watch.problems.length = 0;
});

const BEDROCK_PATH = (stream: boolean) =>
  `/bedrock/model/${encodeURIComponent(BEDROCK_MODEL)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`;
const VERTEX_PATH = (stream: boolean) =>
  `/vertex/v1/projects/cg-proj/locations/us-east5/publishers/anthropic/models/${VERTEX_MODEL}:${stream ? 'streamRawPredict' : 'rawPredict'}`;

/** A body as the clouds' Anthropic SDKs send it: no model (it is in the path), the cloud's anthropic_version. */
function cloudBody(provider: CloudProvider, steps = agentSteps(8, seed++), upto = 6, stream = false): string {
  const { model: _model, ...rest } = anthropicTurn(steps, upto);
  const version = provider === 'bedrock' ? 'bedrock-2023-05-31' : 'vertex-2023-10-16';
  return JSON.stringify({ anthropic_version: version, ...rest, ...(provider === 'vertex' && stream ? { stream: true } : {}) });
}

async function post(path: string, body: string, session: string): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    body,
    // A client's own SigV4 parts must never reach the cloud: the gateway signs itself.
    headers: {
      'content-type': 'application/json',
      'x-context-guru-session': session,
      authorization: 'AWS4-HMAC-SHA256 Credential=CLIENT/x',
      'x-amz-date': '20200101T000000Z',
    },
  });
}

describe('Bedrock invoke', () => {
  it('compresses the body, signs it with the gateway key, and relays the JSON answer', async () => {
    const before = upstream.requests.length;
    const res = await post(BEDROCK_PATH(false), cloudBody('bedrock'), 'br-json');
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { content: Array<{ type: string; text: string }> };
    const sent = upstream.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(watch.problems).toEqual([]);
    expect(sent[0]!.path).toBe(`/model/${encodeURIComponent(BEDROCK_MODEL)}/invoke`);
    expect(sent[0]!.raw).toMatch(/<<cg:[0-9a-f]{16}>>/);
    expect(sent[0]!.headers['x-amz-date']).not.toBe('20200101T000000Z');
    expect(answer.content[0]!.text).toBe(answerText(readTurn(sent[0]!)));
  });

  it('answers a whole-JSON expand call itself and merges the rounds', async () => {
    mode = 'expand_first';
    const before = upstream.requests.length;
    const res = await post(BEDROCK_PATH(false), cloudBody('bedrock'), 'br-json-expand');
    const answer = (await res.json()) as { content: Array<{ type: string; name?: string; text?: string }> };
    expect(upstream.requests.length - before).toBe(2);
    expect(answer.content.some((b) => b.name === 'context_guru_expand')).toBe(false);
    expect(answer.content.map((b) => b.text ?? '').join('')).toMatch(/^expanded sha256=[0-9a-f]{64}$/);
    expect(watch.problems).toEqual([]);
  });
});

describe('Bedrock invoke-with-response-stream', () => {
  it('relays an answer it does not change as the very bytes Bedrock sent', async () => {
    const res = await post(BEDROCK_PATH(true), cloudBody('bedrock'), 'br-text');
    expect(res.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const got = Buffer.from(await res.arrayBuffer());
    expect(got.equals(watch.sent[watch.sent.length - 1]!)).toBe(true);
    expect(watch.problems).toEqual([]);
  });

  it.each(['expand_first', 'text_then_expand'] as const)(
    '%s: the expand call is withheld and the continuation stitched into one valid event stream',
    async (m) => {
      mode = m;
      const before = upstream.requests.length;
      const res = await post(BEDROCK_PATH(true), cloudBody('bedrock'), `br-${m}`);
      const frames = readFrames(Buffer.from(await res.arrayBuffer()));
      const message = await anthropicFinal(framesToSse(frames));
      const sent = upstream.requests.slice(before);
      expect(sent).toHaveLength(2);
      expect(watch.problems).toEqual([]);
      expect(message.content.some((b) => b.type === 'tool_use')).toBe(false);
      const text = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      expect(text).toContain(`expanded sha256=`);
      // The model got the original the marker stood for, byte for byte.
      const results = readTurn(sent[1]!).expandResults;
      expect(text).toContain(sha(results[0]!));
      expect(message.stop_reason).toBe('end_turn');
    },
  );

  it('passes an exception frame through to the client as an exception frame', async () => {
    mode = 'exception';
    const res = await post(BEDROCK_PATH(true), cloudBody('bedrock'), 'br-exception');
    const frames = readFrames(Buffer.from(await res.arrayBuffer()));
    const last = frames[frames.length - 1]!;
    expect(last.headers).toMatchObject({ ':message-type': 'exception', ':exception-type': 'throttlingException' });
    expect(JSON.parse(last.payload.toString())).toEqual({ message: 'Too many tokens, please wait' });
  });

  it('busts no cache across the turns of a session (a priced rewrite is announced), and reads most of the prompt from it', async () => {
    const steps = agentSteps(12, seed++);
    const from = log.length;
    const rewrites: Array<string | null> = [];
    for (let upto = 4; upto <= 12; upto++) {
      const res = await post(BEDROCK_PATH(true), cloudBody('bedrock', steps, upto), 'br-session');
      readFrames(Buffer.from(await res.arrayBuffer()));
      rewrites.push(res.headers.get('x-context-guru-rewrite'));
    }
    const turns = log.slice(from);
    expect(turns).toHaveLength(9);
    // A change of what the provider holds is only ever the planned kind, and says where it starts.
    for (let i = 1; i < turns.length; i++) {
      const bust = prefixBust(turns[i - 1]!.body, turns[i]!.body);
      expect(bust < 0 ? null : `planned; from=${bust}`).toBe(bust < 0 ? null : rewrites[i]);
    }
    const read = turns.slice(1).reduce((s, t) => s + t.bill.cacheRead, 0);
    const prompt = turns.slice(1).reduce((s, t) => s + t.bill.prompt, 0);
    expect(read / prompt).toBeGreaterThan(0.5);
  });
});

describe('Vertex rawPredict and streamRawPredict', () => {
  it('streams the Anthropic SSE with an expand call stitched in, under the token the endpoint issued', async () => {
    mode = 'text_then_expand';
    const before = upstream.requests.length;
    const res = await post(VERTEX_PATH(true), cloudBody('vertex', undefined, 6, true), 'vx-stream');
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const message = await anthropicFinal(Buffer.from(await res.arrayBuffer()));
    const sent = upstream.requests.slice(before);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.path).toBe(`/v1/projects/cg-proj/locations/us-east5/publishers/anthropic/models/${VERTEX_MODEL}:streamRawPredict`);
    expect(sent.map((r) => r.headers.authorization)).toEqual([`Bearer ${tokens.issued()}`, `Bearer ${tokens.issued()}`]);
    expect(watch.problems).toEqual([]);
    expect(message.content.some((b) => b.type === 'tool_use')).toBe(false);
    expect(message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toContain('expanded sha256=');
  });

  it('answers JSON, and exchanges the key for a token once, not per request', async () => {
    const res = await post(VERTEX_PATH(false), cloudBody('vertex'), 'vx-json');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { content: Array<{ text: string }> }).content[0]!.text).toMatch(/^answer to /);
    expect(tokens.grants).toBe(1);
  });
});

describe('refusals', () => {
  it('answers a path of another shape 404 in the Anthropic shape, naming the expected path', async () => {
    const res = await post('/bedrock/model/x/converse', '{}', 'bad');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      type: 'error',
      error: {
        type: 'not_found_error',
        message: expect.stringMatching(/^context-guru: a Bedrock path is \/bedrock\/model\/\{modelId\}\/invoke/),
      },
    });
  });

  it('answers 502 upstream_credentials when the gateway has no credentials for the cloud, sending nothing', async () => {
    const bare = await startGateway(upstream.url, { CONFIG, BEDROCK_UPSTREAM: upstream.url, AWS_REGION: TEST_REGION });
    try {
      const before = upstream.requests.length;
      const res = await fetch(`${bare.url}${BEDROCK_PATH(false)}`, {
        method: 'POST',
        body: cloudBody('bedrock'),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(502);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
        /no Bedrock credentials: set AWS_BEARER_TOKEN_BEDROCK/,
      );
      expect(upstream.requests.length).toBe(before);
    } finally {
      await bare.close();
    }
  });
});
