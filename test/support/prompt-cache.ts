// A provider prompt cache, simulated, so tests and benchmarks can bill a session the way a
// provider would: what a request shares with earlier requests of the same cache key is a cache
// read, what it newly anchors is a cache write, the rest is fresh input.
//
// Model (documented in bench/README.md):
// - A prompt is a list of segments in the order the provider reads it: each tool, each system
//   block (Anthropic), each message. A segment's text is its JSON with every `cache_control` key
//   removed — the provider's cache key ignores where breakpoints sit, so moving one is free.
// - Tokens are o200k counts (countTokens from @context-guru/components) of that segment text, so
//   envelope JSON counts too; absolute numbers are approximate, with/without ratios are what matter.
// - Anthropic: only breakpoints (object cache_control) anchor entries. A request reads the longest
//   live entry found at or up to 20 segments before any of its breakpoints; segments after that
//   read and up to its last breakpoint are written; everything after is fresh. No breakpoint, no
//   caching. An entry lives 5 min (1 h when its cache_control asks for it) and every read renews it.
// - OpenAI: automatic. Every prefix of a request is stored; a request reads its longest live prefix,
//   only from 1024 tokens on and in 128-token steps; writes are free; entries live 5 min.
// - Gemini: implicit prefix caching, billed like OpenAI (automatic, reads at the cached rate, no
//   write premium, from 1024 tokens, 5 min) but read to the exact token: Google publishes no step.
//   Segments: each function declaration (built-in tools whole), systemInstruction, each content.
// - Prefixes shorter than 1024 tokens are never cached (the providers' minimum).
// - Price (one table for every dialect, base $3 / MTok input): fresh 1×, cache write 1.25×,
//   cache read 0.1×, output 5×.
import type { Dialect } from '@context-guru/components';
import { createHash } from 'node:crypto';
import { countTokens } from '@context-guru/components';
import type { RecordedRequest, Script, ScriptedReply } from './fake-upstream';

const PRICE = { baseUsdPerMTok: 3, fresh: 1, cacheWrite: 1.25, cacheRead: 0.1, output: 5 } as const;

/** The simulator's rates as a price-table family matching every model (USD per million tokens). */
export const SIMULATED_PRICES = {
  family: 'simulated',
  match: [''],
  input: PRICE.baseUsdPerMTok,
  cache_write: PRICE.baseUsdPerMTok * PRICE.cacheWrite,
  cache_read: PRICE.baseUsdPerMTok * PRICE.cacheRead,
  output: PRICE.baseUsdPerMTok * PRICE.output,
};
export const FIVE_MINUTES = 5 * 60_000;
const ONE_HOUR = 60 * 60_000;
const MIN_CACHEABLE = 1024;
const OPENAI_STEP = 128;
const LOOKBACK = 20;

export interface Segment {
  kind: 'tool' | 'system' | 'message';
  text: string;
  tokens: number;
  /** Anthropic: the segment carries a breakpoint; its TTL in ms. */
  breakpointTtlMs?: number;
}

export interface Bill {
  prompt: number;
  fresh: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  usd: number;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value with every `cache_control` key removed (deep). */
export function withoutCacheControl(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutCacheControl);
  if (!isObject(v)) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) if (k !== 'cache_control') out[k] = withoutCacheControl(x);
  return out;
}

/** The canonical text of a value for cache identity: its JSON without breakpoints. */
export function canonical(v: unknown): string {
  return JSON.stringify(withoutCacheControl(v));
}

function breakpointTtl(v: unknown): number | undefined {
  let ttl: number | undefined;
  const visit = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(visit);
    if (!isObject(x)) return;
    const cc = x.cache_control;
    if (isObject(cc)) ttl = Math.max(ttl ?? 0, cc.ttl === '1h' ? ONE_HOUR : FIVE_MINUTES);
    for (const [k, y] of Object.entries(x)) if (k !== 'cache_control') visit(y);
  };
  visit(v);
  return ttl;
}

function segment(kind: Segment['kind'], v: unknown, dialect: Dialect): Segment {
  const text = canonical(v);
  const s: Segment = { kind, text, tokens: countTokens(text) };
  if (dialect === 'anthropic') {
    const ttl = breakpointTtl(v);
    if (ttl !== undefined) s.breakpointTtlMs = ttl;
  }
  return s;
}

/** Gemini: each function declaration is a tool of its own (the expand tool is appended to the last list). */
const toolList = (dialect: Dialect, tools: unknown[]): unknown[] =>
  dialect === 'gemini'
    ? tools.flatMap((t) => (isObject(t) && Array.isArray(t.functionDeclarations) ? t.functionDeclarations : [t]))
    : tools;

/** A body's messages: Responses `input` items, Gemini `contents`, else `messages`. */
const messageList = (body: Json): unknown => body.messages ?? body.input ?? body.contents;

/** Segments in provider read order: tools, system (Anthropic, Responses, Gemini), messages. */
export function promptSegments(dialect: Dialect, body: Json): Segment[] {
  const out: Segment[] = [];
  if (Array.isArray(body.tools)) for (const t of toolList(dialect, body.tools)) out.push(segment('tool', t, dialect));
  if (dialect === 'anthropic') {
    const sys = body.system;
    if (typeof sys === 'string' && sys) out.push(segment('system', sys, dialect));
    else if (Array.isArray(sys)) for (const b of sys) out.push(segment('system', b, dialect));
  }
  if (dialect === 'responses' && typeof body.instructions === 'string') out.push(segment('system', body.instructions, dialect));
  if (dialect === 'gemini' && body.systemInstruction !== undefined) out.push(segment('system', body.systemInstruction, dialect));
  const list = messageList(body);
  if (Array.isArray(list)) for (const m of list) out.push(segment('message', m, dialect));
  return out;
}

export function priceUsd(u: Omit<Bill, 'usd' | 'prompt'>): number {
  const weighted = u.fresh * PRICE.fresh + u.cacheWrite * PRICE.cacheWrite + u.cacheRead * PRICE.cacheRead + u.output * PRICE.output;
  return (weighted * PRICE.baseUsdPerMTok) / 1e6;
}

export interface PromptCacheOptions {
  /** Epoch ms of "now" (default Date.now); share the gateway's test clock to simulate idle gaps. */
  now?: () => number;
}

/** One provider's prompt cache across cache keys (a key stands for an organisation / API key). */
export class PromptCacheSim {
  /** key → cumulative prefix hash → expiry (epoch ms). */
  private readonly entries = new Map<string, Map<string, number>>();
  private readonly now: () => number;

  constructor(o: PromptCacheOptions = {}) {
    this.now = o.now ?? Date.now;
  }

  bill(key: string, dialect: Dialect, body: Json, output = 0): Bill {
    const segs = promptSegments(dialect, body);
    const now = this.now();
    let live = this.entries.get(key);
    if (!live) this.entries.set(key, (live = new Map()));
    const store = live;
    const hashes: string[] = [];
    const ends: number[] = [];
    let h = '';
    let total = 0;
    for (const s of segs) {
      h = createHash('sha256').update(h).update('\u0000').update(s.text).digest('hex');
      hashes.push(h);
      total += s.tokens;
      ends.push(total);
    }
    const alive = (j: number): boolean => (store.get(hashes[j]!) ?? 0) > now;
    const usage =
      dialect === 'anthropic'
        ? this.anthropic(segs, hashes, ends, alive, store, now)
        : this.openai(hashes, ends, total, alive, store, now, dialect === 'gemini' ? 1 : OPENAI_STEP);
    const fresh = total - usage.read - usage.write;
    const u = { fresh, cacheRead: usage.read, cacheWrite: usage.write, output };
    return { prompt: total, ...u, usd: priceUsd(u) };
  }

  private anthropic(
    segs: Segment[],
    hashes: string[],
    ends: number[],
    alive: (j: number) => boolean,
    store: Map<string, number>,
    now: number,
  ): { read: number; write: number } {
    const bps = segs.flatMap((s, i) => (s.breakpointTtlMs === undefined ? [] : [i]));
    if (!bps.length) return { read: 0, write: 0 };
    let readEnd = -1;
    for (const bp of bps) {
      for (let j = bp; j >= Math.max(0, bp - LOOKBACK); j--) {
        if (alive(j)) {
          readEnd = Math.max(readEnd, j);
          break;
        }
      }
    }
    const read = readEnd >= 0 ? ends[readEnd]! : 0;
    let written = 0;
    for (const bp of bps) {
      if (ends[bp]! < MIN_CACHEABLE) continue;
      // A read renews the entry it hit; a write anchors a new one at each breakpoint.
      store.set(hashes[bp]!, now + segs[bp]!.breakpointTtlMs!);
      if (bp > readEnd) written = Math.max(written, ends[bp]!);
    }
    if (readEnd >= 0) store.set(hashes[readEnd]!, Math.max(store.get(hashes[readEnd]!) ?? 0, now + FIVE_MINUTES));
    return { read, write: Math.max(0, written - read) };
  }

  private openai(
    hashes: string[],
    ends: number[],
    total: number,
    alive: (j: number) => boolean,
    store: Map<string, number>,
    now: number,
    step: number,
  ): { read: number; write: number } {
    let readEnd = -1;
    for (let j = hashes.length - 1; j >= 0; j--) {
      if (alive(j)) {
        readEnd = j;
        break;
      }
    }
    const prefix = readEnd >= 0 ? ends[readEnd]! : 0;
    const read = prefix < MIN_CACHEABLE ? 0 : MIN_CACHEABLE + Math.floor((prefix - MIN_CACHEABLE) / step) * step;
    for (let j = 0; j < hashes.length; j++) if (ends[j]! >= MIN_CACHEABLE) store.set(hashes[j]!, now + FIVE_MINUTES);
    return { read: Math.min(read, total), write: 0 };
  }
}

/** Canonical texts of a body's messages (breakpoints removed). */
export function canonicalMessages(body: Json): string[] {
  const list = messageList(body);
  return Array.isArray(list) ? list.map(canonical) : [];
}

/**
 * Index of the first message of `prev` that `next` no longer carries unchanged (a message-prefix
 * cache bust), or -1. A shorter `next` (the agent compacted its transcript) is a reset, not a bust.
 */
export function prefixBust(prev: Json, next: Json): number {
  const a = canonicalMessages(prev);
  const b = canonicalMessages(next);
  if (b.length < a.length) return -1;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** The part of a prompt before the messages (tools, system) changed between two requests. */
export function headChanged(dialect: Dialect, prev: Json, next: Json): boolean {
  const head = (b: Json) =>
    promptSegments(dialect, b)
      .filter((s) => s.kind !== 'message')
      .map((s) => s.text)
      .join('\u0000');
  return head(prev) !== head(next);
}

/** What the caching upstream billed for one request it received. */
export interface BilledRequest {
  key: string;
  dialect: Dialect;
  body: Json;
  bill: Bill;
}

/** The cache key of a recorded request: its credential, as a provider scopes caches per org/key. */
function cacheKeyOf(req: RecordedRequest): string {
  const h = req.headers;
  const v = h['x-api-key'] ?? h['authorization'] ?? 'anonymous';
  return Array.isArray(v) ? v.join(',') : v;
}

/** A Responses body's usage for a bill: cached tokens are part of `input_tokens` (writes are free). */
function responsesUsage(bill: Bill): Record<string, unknown> {
  const input = bill.fresh + bill.cacheRead;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: bill.cacheRead },
    output_tokens: bill.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + bill.output,
  };
}

/** Rewrites the usage of a JSON reply with what the simulated cache billed. */
function withBilledUsage(reply: ScriptedReply, dialect: Dialect, bill: Bill): ScriptedReply {
  if (reply.kind !== 'json' || !isObject(reply.body)) return reply;
  if (dialect === 'gemini') {
    // Gemini's promptTokenCount includes the cached tokens.
    const prompt = bill.fresh + bill.cacheRead;
    const usageMetadata = {
      promptTokenCount: prompt,
      cachedContentTokenCount: bill.cacheRead,
      candidatesTokenCount: bill.output,
      totalTokenCount: prompt + bill.output,
    };
    return { ...reply, body: { ...reply.body, usageMetadata } };
  }
  const usage =
    dialect === 'responses'
      ? responsesUsage(bill)
      : dialect === 'anthropic'
        ? {
            input_tokens: bill.fresh,
            cache_creation_input_tokens: bill.cacheWrite,
            cache_read_input_tokens: bill.cacheRead,
            output_tokens: bill.output,
          }
        : {
            prompt_tokens: bill.fresh + bill.cacheRead,
            completion_tokens: bill.output,
            total_tokens: bill.fresh + bill.cacheRead + bill.output,
            prompt_tokens_details: { cached_tokens: bill.cacheRead },
          };
  return { ...reply, body: { ...reply.body, usage } };
}

/**
 * Wraps a fake-upstream script so the upstream behaves like a caching provider: every request is
 * billed against the simulated cache (with `output` output tokens), logged, and handed to the
 * script, whose JSON replies then carry the billed usage (an SSE script reads it from `bill`).
 */
export function cachingScript(
  sim: PromptCacheSim,
  script: (req: RecordedRequest, bill: Bill) => ScriptedReply,
  log: BilledRequest[] = [],
  output = 10,
): Script {
  return (req) => {
    const key = cacheKeyOf(req);
    const bill = sim.bill(key, req.dialect, req.body, output);
    log.push({ key, dialect: req.dialect, body: req.body, bill });
    return withBilledUsage(script(req, bill), req.dialect, bill);
  };
}
