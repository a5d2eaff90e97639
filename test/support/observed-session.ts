// A multi-turn agent session through the real gateway against a caching fake provider, each of
// the three dialects, streaming and not, with expand rounds: the traffic the observability tests measure.
// The provider's side keeps its own ledger of every usage it reported, split by whether the request
// was a client's own (origin client) or a continuation the gateway made to answer an expand call
// (origin expand), so the gateway's exported figures can be checked against what was reported.
import type { Dialect } from '@context-guru/components';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from './fake-upstream';
import { anthropicExpandSse, anthropicTextSse, openAiExpandSse, openAiTextSse } from './fake-upstream-sse';
import { PromptCacheSim, cachingScript, type Bill } from './prompt-cache';
import { responsesJson } from './responses-model';
import { callItem, responseSse, responsesTurn, textItem } from './responses-fixtures';
import { answerText, anthropicJson, openaiJson, readTurn } from './scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from './transcripts';

export type { Dialect } from '@context-guru/components';
type Origin = 'client' | 'expand';
export type Kind = 'fresh' | 'cache_read' | 'cache_write' | 'output';
export const KINDS: readonly Kind[] = ['fresh', 'cache_read', 'cache_write', 'output'];

export const SESSION_CONFIG = 'pipeline: [cacheinject, format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 3 }\n';
export const MODELS: Record<Dialect, string> = {
  anthropic: 'claude-sonnet-4-6',
  openai: 'gpt-4o-2024-08-06',
  responses: 'gpt-4o-2024-08-06',
  gemini: 'gemini-2.5-pro',
};

/** tokens[origin][dialect][kind], as the fake provider reported them. */
type Ledger = Record<Origin, Record<Dialect, Record<Kind, number>>>;

const zero = (): Record<Kind, number> => ({ fresh: 0, cache_read: 0, cache_write: 0, output: 0 });

export interface ObservedUpstream {
  upstream: FakeUpstream;
  ledger: Ledger;
  /** Answer the next advertised request that carries a marker with an expand call. */
  expandNext(on: boolean): void;
  close(): Promise<void>;
}

/** The Responses answer: JSON (its usage written by the caching script) or the event stream. */
function responsesReply(stream: boolean, bill: Bill, text: string, expandFor: string | undefined): ScriptedReply {
  if (!stream) return responsesJson(text, expandFor);
  const item = expandFor
    ? callItem('fc_expand_obs', 'call_expand_obs', 'context_guru_expand', JSON.stringify({ id: expandFor }))
    : textItem('msg_obs', text);
  const usage = { input_tokens: bill.fresh + bill.cacheRead, cached: bill.cacheRead, output_tokens: bill.output };
  return { kind: 'sse', events: [responseSse('resp_obs', [item], usage)] };
}

function reply(req: RecordedRequest, bill: Bill, expand: boolean): ScriptedReply {
  const turn = readTurn(req);
  const stream = req.body.stream === true;
  const id = turn.markerId!;
  const text = answerText(turn);
  if (req.dialect === 'responses') return responsesReply(stream, bill, text, expand ? id : undefined);
  if (req.dialect === 'anthropic') {
    const usage = {
      input_tokens: bill.fresh,
      cache_read_input_tokens: bill.cacheRead,
      cache_creation_input_tokens: bill.cacheWrite,
      output_tokens: bill.output,
    };
    if (stream) return { kind: 'sse', events: [expand ? anthropicExpandSse([id], { usage }) : anthropicTextSse(text, { usage })] };
    const r = expand ? anthropicJson('', { id: 'toolu_expand_obs', name: 'context_guru_expand', input: { id } }) : anthropicJson(text);
    return { ...r, body: { ...(r as { body: object }).body, model: MODELS.anthropic } } as ScriptedReply;
  }
  const usage = { prompt_tokens: bill.fresh + bill.cacheRead, completion_tokens: bill.output, cached_tokens: bill.cacheRead };
  if (stream) return { kind: 'sse', events: [expand ? openAiExpandSse([id], { usage }) : openAiTextSse(text, { usage })] };
  const r = expand
    ? openaiJson('', { id: 'call_expand_obs', name: 'context_guru_expand', args: JSON.stringify({ id }) })
    : openaiJson(text);
  return { ...r, body: { ...(r as { body: object }).body, model: MODELS.openai } } as ScriptedReply;
}

export async function startObservedUpstream(): Promise<ObservedUpstream> {
  const ledger: Ledger = {
    client: { anthropic: zero(), openai: zero(), responses: zero(), gemini: zero() },
    expand: { anthropic: zero(), openai: zero(), responses: zero(), gemini: zero() },
  };
  let wantExpand = false;
  const sim = new PromptCacheSim();
  const upstream = await startFakeUpstream(
    cachingScript(
      sim,
      (req, bill) => {
        const turn = readTurn(req);
        const expand = wantExpand && turn.advertised && turn.markerId !== undefined && turn.expandResults.length === 0;
        const origin: Origin = turn.expandResults.length > 0 ? 'expand' : 'client';
        const row = ledger[origin][req.dialect];
        row.fresh += bill.fresh;
        row.cache_read += bill.cacheRead;
        row.cache_write += bill.cacheWrite;
        row.output += bill.output;
        return reply(req, bill, expand);
      },
      [],
      17,
    ),
  );
  return { upstream, ledger, expandNext: (on) => (wantExpand = on), close: () => upstream.close() };
}

/** As Claude Code does: the client marks the end of the newest message as a cache breakpoint. */
function withClientBreakpoint<T extends { messages: Array<Record<string, unknown>> }>(body: T): T {
  const last = body.messages[body.messages.length - 1]!;
  const blocks = Array.isArray(last.content)
    ? (last.content as Array<Record<string, unknown>>)
    : [{ type: 'text', text: String(last.content) }];
  const marked = blocks.map((b, i) => (i === blocks.length - 1 ? { ...b, cache_control: { type: 'ephemeral' } } : b));
  return { ...body, messages: [...body.messages.slice(0, -1), { ...last, content: marked }] };
}

const PATHS: Record<Dialect, string> = {
  anthropic: '/anthropic/v1/messages',
  openai: '/openai/v1/chat/completions',
  responses: '/openai/v1/responses',
  gemini: '/gemini/v1beta/models/gemini-2.5-pro:generateContent',
};

export interface SessionOptions {
  turns?: number;
  /** Extra headers on every request (e.g. a tenant key, a traceparent). */
  headers?: Record<string, string>;
}

/**
 * Turns 4..4+n of one session per dialect, alternating streaming and JSON, every other turn
 * answered first with an expand call. Each response is read to its end.
 */
export async function runObservedSession(gatewayUrl: string, up: ObservedUpstream, o: SessionOptions = {}): Promise<number> {
  const n = o.turns ?? 4;
  let requests = 0;
  for (const dialect of ['anthropic', 'openai', 'responses'] as const) {
    // Different outputs per dialect: an original expanded in one session is kept verbatim tenant-wide.
    const steps = agentSteps(12, { anthropic: 23, openai: 29, responses: 37 }[dialect]);
    for (let t = 4; t < 4 + n; t++) {
      const stream = t % 2 === 0;
      up.expandNext(t % 2 === 1 || t === 4);
      const extra = {
        model: MODELS[dialect],
        stream,
        ...(stream && dialect === 'openai' ? { stream_options: { include_usage: true } } : {}),
      };
      const body =
        dialect === 'anthropic'
          ? withClientBreakpoint(anthropicTurn(steps, t, extra))
          : dialect === 'openai'
            ? openaiTurn(steps, t, extra)
            : responsesTurn(steps, t, extra);
      const path = PATHS[dialect];
      const auth: Record<string, string> =
        dialect === 'anthropic' ? { 'x-api-key': 'sk-ant-observed' } : { authorization: 'Bearer sk-observed' };
      const res = await fetch(`${gatewayUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-context-guru-session': `observed-${dialect}`, ...auth, ...(o.headers ?? {}) },
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`${dialect} turn ${t}: ${res.status} ${await res.text()}`);
      await res.text();
      requests++;
    }
  }
  up.expandNext(false);
  return requests;
}
