// A client that goes away in the middle of an expand exchange takes the upstream call in flight
// with it: while the first answer is still arriving, while the gateway waits on the continuation it
// asked for, and while the continuation is arriving — both dialects, streaming and not. The fake
// provider sees its connection closed, no upstream request follows the abort, and the gateway goes
// on serving the next request.
import { request, type ClientRequest } from 'node:http';
import type { Dialect } from '@context-guru/components';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../support/fake-upstream';
import { anthropicMessage, openAiCompletion } from '../support/fake-upstream-json';
import { anthropicSse, openAiSse, type AnthropicBlock } from '../support/fake-upstream-sse';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { metricSum, scrape } from '../support/metrics-text';
import { readTurn } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

const CONFIG = 'pipeline: [format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n';
const PREAMBLE = 'Let me look at the full output.';
const ANSWER = 'The parser drops the trailing comma; the fix is in tokenize().';
/** Deltas carry a few characters each; the first six are in the first one in both dialects. */
const firstPiece = (text: string): string => text.slice(0, 6);
/** Far longer than any of these exchanges takes; only a gateway that never cancels reaches it. */
const BOUND_MS = 10_000;

type Phase = 'first answer arriving' | 'continuation awaited' | 'continuation arriving';

let upstream: FakeUpstream;
let gateway: GatewayHarness;
/** What the provider answers, one entry per request, in order. */
let plan: Array<(req: RecordedRequest) => ScriptedReply> = [];
const arrived: Array<(req: RecordedRequest) => void> = [];
// Expanded originals are kept verbatim tenant-wide, so each exchange works on a transcript of its own.
let seed = 300;

beforeAll(async () => {
  upstream = await startFakeUpstream((req) => {
    arrived.shift()?.(req);
    const next = plan.shift();
    if (!next) throw new Error(`unplanned upstream request ${req.path}`);
    return next(req);
  });
  gateway = await startGateway(upstream.url, { CONFIG });
});
afterAll(async () => {
  // Every body the gateway sent — continuations included — is one the provider accepts.
  for (const r of upstream.requests) expect(validateProviderShape(r.dialect, r.body)).toEqual([]);
  // The provider first: a call left hanging by a failed test must not hold the gateway's shutdown.
  await upstream.close();
  await gateway.close();
});

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${BOUND_MS} ms`)), BOUND_MS);
  });
  return Promise.race([p, bound]).finally(() => clearTimeout(timer));
}

/** The next upstream request, once it has arrived. */
function nextArrival(): Promise<RecordedRequest> {
  return new Promise((resolve) => arrived.push(resolve));
}

/** The text up to (not including) the SSE event that carries `needle`: a stream cut mid-way. */
function before(full: string, needle: string): string {
  const at = full.indexOf(needle);
  if (at < 0) throw new Error(`${needle} not in the stream`);
  return full.slice(0, full.lastIndexOf('\n\n', at) + 2);
}

function expandAnswer(dialect: Dialect, stream: boolean, markerId: string): string {
  if (dialect === 'anthropic') {
    const blocks: AnthropicBlock[] = [
      { type: 'text', text: PREAMBLE },
      { type: 'tool_use', id: 'toolu_01AbortExpand', name: 'context_guru_expand', input: { id: markerId } },
    ];
    return stream ? anthropicSse(blocks) : JSON.stringify(anthropicMessage(blocks));
  }
  const calls = [{ id: 'call_AbortExpand', name: 'context_guru_expand', args: { id: markerId } }];
  return stream ? openAiSse(PREAMBLE, calls) : JSON.stringify(openAiCompletion(PREAMBLE, calls));
}

function textAnswer(dialect: Dialect, stream: boolean): string {
  if (dialect === 'anthropic') {
    const blocks: AnthropicBlock[] = [{ type: 'text', text: ANSWER }];
    return stream ? anthropicSse(blocks) : JSON.stringify(anthropicMessage(blocks));
  }
  return stream ? openAiSse(ANSWER, []) : JSON.stringify(openAiCompletion(ANSWER));
}

/** A whole answer, as the provider sends it. */
function whole(body: string, stream: boolean): ScriptedReply {
  return stream ? { kind: 'sse', events: [body] } : { kind: 'raw', status: 200, body };
}

/** The first part of an answer, the rest never sent: for a stream, everything before its end; for JSON, half. */
function held(body: string, stream: boolean, written: () => void): ScriptedReply {
  const end = stream ? (body.includes('event: message_delta') ? 'event: message_delta' : '"finish_reason":"') : '';
  const head = stream ? before(body, end) : body.slice(0, body.length >> 1);
  return { kind: 'hold', contentType: stream ? 'text/event-stream' : 'application/json', head, written };
}

interface ClientCall {
  /** Resolves once the client has received `text` (anywhere in the body so far). */
  received(text: string): Promise<void>;
  /** The client goes away: its connection to the gateway is closed. */
  abort(): void;
  /** The whole body, for a call that is let finish. */
  body: Promise<{ status: number; text: string }>;
}

function call(dialect: Dialect, stream: boolean, session: string): ClientCall {
  const steps = agentSteps(8, seed++);
  const path = dialect === 'anthropic' ? '/anthropic/v1/messages' : '/openai/v1/chat/completions';
  const payload = JSON.stringify({ ...(dialect === 'anthropic' ? anthropicTurn(steps, 6) : openaiTurn(steps, 6)), stream });
  const key = dialect === 'anthropic' ? { 'x-api-key': 'sk-ant-abort' } : { authorization: 'Bearer sk-abort' };
  const req: ClientRequest = request(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-context-guru-session': session, ...key },
  });
  let text = '';
  const waiting: Array<[string, () => void]> = [];
  const body = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      res.on('data', (c: Buffer) => {
        text += c.toString('utf8');
        for (const [t, resolve] of waiting.splice(0)) {
          if (text.includes(t)) resolve();
          else waiting.push([t, resolve]);
        }
      });
      res.once('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.once('error', reject);
    });
  });
  body.catch(() => undefined); // an aborted call's body never settles well; only a finished one is read
  req.end(payload);
  return {
    received: (t) => (text.includes(t) ? Promise.resolve() : new Promise((resolve) => waiting.push([t, resolve]))),
    abort: () => req.destroy(),
    body,
  };
}

const aborts = async (): Promise<number> => metricSum(await scrape(gateway.url), 'cg_requests_total', { outcome: 'client_abort' });

async function recordedAbort(prior: number): Promise<void> {
  while ((await aborts()) === prior) await new Promise((r) => setTimeout(r, 10));
}

/**
 * Sets the provider's answers for one exchange and brings the client to `phase`: returns the
 * upstream request in flight there and the client, not yet aborted.
 */
async function reach(dialect: Dialect, stream: boolean, phase: Phase): Promise<{ inFlight: RecordedRequest; client: ClientCall }> {
  let written!: () => void;
  const headSent = new Promise<void>((resolve) => (written = resolve));
  const first = nextArrival();
  const second = phase === 'first answer arriving' ? null : nextArrival();
  const marker = (req: RecordedRequest): string => {
    const turn = readTurn(req);
    // The tool is offered from the first turn and the transcript carries a marker to expand.
    expect(turn.advertised).toBe(true);
    return turn.markerId!;
  };
  if (phase === 'first answer arriving') {
    plan = [(req) => held(expandAnswer(dialect, stream, marker(req)), stream, written)];
  } else {
    plan = [
      (req) => whole(expandAnswer(dialect, stream, marker(req)), stream),
      phase === 'continuation awaited' ? () => ({ kind: 'hang' }) : () => held(textAnswer(dialect, stream), stream, written),
    ];
  }
  const client = call(dialect, stream, `abort-${dialect}-${stream}-${seed}`);
  const firstReq = await within(first, 'the first upstream request');
  if (phase === 'first answer arriving') {
    await within(stream ? client.received(firstPiece(PREAMBLE)) : headSent, 'the first answer under way');
    return { inFlight: firstReq, client };
  }
  const cont = await within(second!, 'the continuation request');
  // The continuation answers the withheld expand call with the original.
  expect(readTurn(cont).expandResults).toHaveLength(1);
  if (phase === 'continuation arriving')
    await within(stream ? client.received(firstPiece(ANSWER)) : headSent, 'the continuation under way');
  return { inFlight: cont, client };
}

const cases: Array<[Dialect, boolean, Phase]> = [];
for (const dialect of ['anthropic', 'openai'] as const)
  for (const stream of [true, false])
    for (const phase of ['first answer arriving', 'continuation awaited', 'continuation arriving'] as const)
      cases.push([dialect, stream, phase]);

describe('a client abort cancels the upstream call in flight', () => {
  it.each(cases)('%s, stream %s: %s', async (dialect, stream, phase) => {
    const priorAborts = await aborts();
    const { inFlight, client } = await reach(dialect, stream, phase);
    const sentBefore = upstream.requests.length;
    client.abort();
    await within(upstream.hungUp(inFlight), 'the provider seeing the abort');
    await within(recordedAbort(priorAborts), 'the gateway recording the abort');
    // Nothing more went upstream for the aborted exchange (no continuation after it).
    expect(upstream.requests.length).toBe(sentBefore);

    // And the gateway goes on serving: the next request is answered in full.
    plan = [() => whole(textAnswer(dialect, stream), stream)];
    const next = await within(call(dialect, stream, `after-${dialect}-${seed}`).body, 'the next request');
    expect(next.status).toBe(200);
    expect(next.text).toContain(firstPiece(ANSWER));
    if (stream) expect(next.text).toMatch(dialect === 'anthropic' ? /event: message_stop\n/ : /data: \[DONE\]\n\n$/);
    expect(upstream.requests.length).toBe(sentBefore + 1);
    expect(plan).toEqual([]);
  });
});
