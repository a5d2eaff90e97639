// The hot path runs on plain node:http, not through Fastify's and Nest's request lifecycle (hooks,
// middleware runner, content-type parsers): the proxy routes are plain functions over a request
// with its raw body Buffer and a minimal reply. Fastify keeps every other route (ops, 404s).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { type Dialect } from '@context-guru/engine';
import { checkBody, checkContentType, invalidUtf8 } from './body-checks';
import { dialectOfUrl, gatewayError, type GatewayErrorBody } from './gateway-errors';
import { bodyDeadline, BodyReadTimeout, readBody, refuseUnread, type BodyLimits } from './body-read';
import { Utf8StreamCheck } from './utf8-stream-check';
import { applyTenantPath } from './tenant-key';

export interface HotRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  query: Record<string, string>;
  /** The body exactly as received; empty on a `lazyBody` route until `readBody()` resolves. */
  body: Buffer;
  /**
   * On a `lazyBody` route: the declared content-length is within the limit and the body is unread,
   * so it may be forwarded as a stream (the HTTP parser delivers exactly that many bytes).
   */
  streamable: boolean;
  /** The client's address, as the socket has it ('' once the socket is gone). */
  readonly remoteAddress: string;
  /** Reads the whole body (counted against the limit and the read timeout) and checks it; a refusal rejects. */
  readBody(): Promise<Buffer>;
  /**
   * The unread body as a stream, checked on the way: a refusal found mid-way is set in `refused`
   * and cancels `abort` (the upstream call carrying the stream), and the caller rethrows it. A body
   * the parser has already delivered whole comes back as that Buffer instead, checked at once (a
   * refusal throws): one write upstream, no stream machinery.
   */
  streamChecked(abort: { abort(): void }): Readable | Buffer;
  refused: BodyRefused | null;
}

/** A body the gateway will not forward (over the limit, wrong type, not UTF-8): answered as is. */
export class BodyRefused extends Error {
  constructor(
    readonly refusal: GatewayErrorBody,
    /** Over the limit: the rest of the body is not read, so the connection cannot be reused. */
    readonly close = false,
  ) {
    super(refusal.body);
  }
}

/** The streamed bodies being relayed: what a drain ends at its deadline (each with its error tail). */
export class OpenStreams {
  private readonly bodies = new Set<Readable>();

  add(body: Readable): void {
    this.bodies.add(body);
  }

  delete(body: Readable): void {
    this.bodies.delete(body);
  }

  get size(): number {
    return this.bodies.size;
  }

  /** Fails every open body with `err`: each response ends with its tail (an SSE error event), or is cut. */
  endAll(err: Error): void {
    for (const body of [...this.bodies]) body.destroy(err);
  }
}

/** The subset of a reply the proxy handlers use. */
export class HotReply {
  private status = 200;
  private readonly outHeaders: Record<string, string | string[]> = {};
  sent = false;
  private errorTail: ((err: unknown) => Buffer) | null = null;

  constructor(
    readonly raw: ServerResponse,
    private readonly open?: OpenStreams,
  ) {}

  code(status: number): this {
    this.status = status;
    return this;
  }

  header(name: string, value: string | string[]): this {
    this.outHeaders[name.toLowerCase()] = value;
    return this;
  }

  headers(all: Record<string, string | string[]>): this {
    for (const k in all) {
      const v = all[k];
      if (v !== undefined) this.header(k, v);
    }
    return this;
  }

  send(body: string | Buffer | Readable): this {
    if (this.sent) return this;
    this.sent = true;
    const res = this.raw;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      const buf = typeof body === 'string' ? Buffer.from(body) : body;
      res.writeHead(this.status, { ...this.outHeaders, 'content-length': String(buf.length) });
      res.end(buf);
      return this;
    }
    res.writeHead(this.status, this.outHeaders);
    // Backpressure and teardown both ways (without stream.pipeline, whose AbortController costs
    // on every request): a client that goes away destroys the body, and so the upstream stream.
    // A source that fails mid-way ends the response with the tail (an SSE error event) when there
    // is one, instead of a reset connection the client cannot tell from a network fault.
    const tail = this.errorTail;
    body.pipe(res);
    body.once('error', (err: unknown) => {
      body.unpipe(res);
      if (res.destroyed) return;
      if (tail) res.end(tail(err));
      else res.destroy();
    });
    res.on('close', () => {
      this.open?.delete(body);
      if (!body.destroyed) body.destroy();
    });
    this.open?.add(body);
    return this;
  }

  /** What to write last when a streamed body fails after the headers went out. */
  onStreamError(tail: (err: unknown) => Buffer): this {
    this.errorTail = tail;
    return this;
  }
}

type HotHandler = (req: HotRequest, reply: HotReply) => Promise<unknown>;

export interface HotRoute {
  method: 'GET' | 'POST' | 'DELETE' | 'PATCH';
  path: string;
  /** `path` is a prefix: the route serves every path under it no exact route claims. */
  prefix?: boolean;
  dialect: Dialect;
  handler: HotHandler;
  /** The handler reads (or streams) the body itself; otherwise it is read and checked first. */
  lazyBody?: boolean;
}

const EMPTY = Buffer.alloc(0);

function declaredLength(req: IncomingMessage): number {
  const v = req.headers['content-length'];
  return v === undefined ? NaN : Number(v);
}

function tooLarge(dialect: Dialect, limit: number): BodyRefused {
  return new BodyRefused(gatewayError(dialect, 'request_too_large', `request body is over the ${limit} byte limit`), true);
}

function timedOut(dialect: Dialect, ms: number): BodyRefused {
  return new BodyRefused(gatewayError(dialect, 'request_timeout', `the request body did not arrive within ${ms} ms`), true);
}

class Incoming implements HotRequest {
  body: Buffer = EMPTY;
  refused: BodyRefused | null = null;
  readonly method: string;
  readonly headers: IncomingMessage['headers'];
  private queryCache: Record<string, string> | undefined;

  constructor(
    private readonly stream: IncomingMessage,
    readonly url: string,
    private readonly q: number,
    private readonly limits: BodyLimits,
    private readonly dialect: Dialect,
    readonly streamable: boolean,
  ) {
    this.method = stream.method ?? 'GET';
    this.headers = stream.headers;
  }

  get remoteAddress(): string {
    return this.stream.socket?.remoteAddress ?? '';
  }

  get query(): Record<string, string> {
    return (this.queryCache ??= Object.fromEntries(new URLSearchParams(this.q < 0 ? '' : this.url.slice(this.q + 1))));
  }

  async readBody(): Promise<Buffer> {
    const body = await readBody(this.stream, this.limits).catch((err: unknown) => {
      throw err instanceof BodyReadTimeout ? timedOut(this.dialect, err.timeoutMs) : err;
    });
    if (body === null) throw tooLarge(this.dialect, this.limits.limit);
    const refused = checkBody(this.dialect, this.headers, body);
    if (refused) throw new BodyRefused(refused);
    return (this.body = body);
  }

  streamChecked(abort: { abort(): void }): Readable | Buffer {
    const whole = this.arrivedWhole();
    if (whole) {
      const refused = checkBody(this.dialect, this.headers, whole);
      if (refused) throw (this.refused = new BodyRefused(refused));
      return (this.body = whole);
    }
    const typeRefused = checkContentType(this.dialect, this.headers);
    if (typeRefused) throw (this.refused = new BodyRefused(typeRefused, true));
    const utf8 = new Utf8StreamCheck();
    const refuse = (refusal = new BodyRefused(invalidUtf8(this.dialect, utf8.invalidAt), true)) => {
      this.refused = refusal;
      abort.abort();
    };
    bodyDeadline(this.stream, this.limits.timeoutMs, () => {
      if (!this.refused) refuse(timedOut(this.dialect, this.limits.timeoutMs));
    });
    // Paused first, so this listener does not start the flow before undici attaches its own (it
    // resumes the stream once it is ready to write): both then see every chunk, this one first.
    this.stream.pause();
    this.stream.on('data', (c: Buffer) => {
      if (!utf8.push(c) && !this.refused) refuse();
    });
    this.stream.once('end', () => {
      if (!utf8.end() && !this.refused) refuse();
    });
    return this.stream;
  }

  /**
   * The body when the HTTP parser has finished the message already — the usual case for a body
   * that came in the reads with its headers (a 60 KB request is one 64 KB read). Sending it as one
   * Buffer skips undici's stream writer and the check's listeners: at 1 connection that stream
   * path was ≈ 50 µs of the off preset's main-thread time per request over the bare proxy's.
   */
  private arrivedWhole(): Buffer | null {
    const s = this.stream;
    const declared = declaredLength(s);
    if (!s.complete || !(declared > 0) || s.readableLength !== declared) return null;
    // read() hands over everything buffered, which is exactly the declared body here.
    const whole: unknown = s.read();
    if (Buffer.isBuffer(whole) && whole.length === declared) return whole;
    throw new Error(`the body read whole was not the ${declared} bytes the parser had buffered`);
  }
}

/** A route's own dialect; the dialect-neutral routes (/compact, /expand) take `?provider=`. */
function routeDialect(route: HotRoute, url: string, q: number): Dialect {
  if (route.dialect !== 'openai' || q < 0) return route.dialect;
  if (url.includes('provider=anthropic', q)) return 'anthropic';
  if (url.includes('provider=gemini', q)) return 'gemini';
  return url.includes('provider=responses', q) ? 'responses' : 'openai';
}

/** A proxy path asked with a method it does not serve: 405 in the path's dialect, the body left unread. */
function notAllowed(req: IncomingMessage, res: ServerResponse, allowed: string): void {
  const e = gatewayError(dialectOfUrl(req.url ?? '/'), 'method_not_allowed', `${req.method ?? '?'} is not served here; use ${allowed}`);
  res.writeHead(e.status, { 'content-type': 'application/json', allow: allowed, 'content-length': String(Buffer.byteLength(e.body)) });
  res.end(e.body);
  req.resume();
}

/**
 * Wraps Fastify's request handler: proxy routes are served here, everything else falls through.
 * Errors the gateway makes use the dialect's error shape.
 */
export function hotServer(
  routes: readonly HotRoute[],
  limits: BodyLimits,
  onError: (err: unknown, url: string) => void,
  open = new OpenStreams(),
) {
  const table = new Map(routes.filter((r) => !r.prefix).map((r) => [`${r.method} ${r.path}`, r]));
  const prefixed = routes.filter((r) => r.prefix);
  const lookup = (method: string | undefined, path: string): HotRoute | undefined =>
    table.get(`${method} ${path}`) ?? (prefixed.length ? prefixed.find((r) => r.method === method && path.startsWith(r.path)) : undefined);
  const methodsAt = new Map<string, string>();
  for (const r of routes) if (!r.prefix) methodsAt.set(r.path, methodsAt.has(r.path) ? `${methodsAt.get(r.path)}, ${r.method}` : r.method);
  return (fallback: (req: IncomingMessage, res: ServerResponse) => void): Server => {
    const server = createServer((req, res) => {
      // `/t/<key>/…` becomes `/…` plus a pseudo-header, before routing (and any log) sees the URL.
      applyTenantPath(req);
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const route = lookup(req.method, path);
      if (!route) {
        const allowed = methodsAt.get(path);
        return allowed ? notAllowed(req, res, allowed) : fallback(req, res);
      }
      const reply = new HotReply(res, open);
      const dialect = routeDialect(route, url, q);
      const declared = declaredLength(req);
      // A body declared over the limit is refused before anything reads it.
      if (declared > limits.limit) return refuseUnread(req, res, tooLarge(dialect, limits.limit).refusal, limits);
      const incoming = new Incoming(req, url, q, limits, dialect, declared <= limits.limit);
      const handled = route.lazyBody ? route.handler(incoming, reply) : incoming.readBody().then(() => route.handler(incoming, reply));
      handled.catch((err: unknown) => {
        if (err instanceof BodyRefused) {
          if (reply.sent) return void res.destroy();
          reply.code(err.refusal.status).header('content-type', 'application/json');
          if (err.close) reply.header('connection', 'close');
          reply.send(err.refusal.body);
          if (err.close) req.resume();
          return;
        }
        // A client that went away before its body was in: nothing failed, and no one to answer.
        if (req.destroyed && !req.complete) return void res.destroy();
        onError(err, url);
        if (!reply.sent) {
          const e = gatewayError(dialect, 'internal_error', 'internal error');
          reply.code(500).header('content-type', 'application/json').send(e.body);
        } else res.destroy();
      });
    });
    // Fastify sets its keep-alive only on servers it creates; node's own 5 s closed an agent's
    // connection between turns, and a turn sent as it closed failed before the gateway saw it.
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    return server;
  };
}

/** Idle keep-alive connections are kept this long: Fastify's default, past load balancers' 60 s. */
const KEEP_ALIVE_MS = 72_000;
