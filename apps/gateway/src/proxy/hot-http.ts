// The hot path runs on plain node:http, not through Fastify's and Nest's request lifecycle (hooks,
// middleware runner, content-type parsers): the proxy routes are plain functions over a request
// with its raw body Buffer and a minimal reply. Fastify keeps every other route (ops, 404s).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import type { Dialect } from '../wire/wire.types';
import { checkBody } from './body-checks';
import { gatewayError } from './gateway-errors';
import { applyTenantPath } from '../tenancy/tenant-key';

export interface HotRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  query: Record<string, string>;
  /** The body exactly as received. */
  body: Buffer;
}

/** The subset of a reply the proxy handlers use. */
export class HotReply {
  private status = 200;
  private readonly outHeaders: Record<string, string | string[]> = {};
  sent = false;
  private errorTail: ((err: unknown) => Buffer) | null = null;

  constructor(readonly raw: ServerResponse) {}

  code(status: number): this {
    this.status = status;
    return this;
  }

  header(name: string, value: string | string[]): this {
    this.outHeaders[name.toLowerCase()] = value;
    return this;
  }

  headers(all: Record<string, string | string[]>): this {
    for (const [k, v] of Object.entries(all)) this.header(k, v);
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
    // Backpressure and teardown both ways: a client that goes away destroys the upstream stream.
    if (!this.errorTail) {
      pipeline(body, res, () => undefined);
      return this;
    }
    // A source that fails mid-way ends the response with the tail (an SSE error event) instead of
    // a reset connection the client cannot tell from a network fault.
    const tail = this.errorTail;
    body.pipe(res);
    body.once('error', (err: unknown) => {
      body.unpipe(res);
      if (!res.destroyed) res.end(tail(err));
    });
    res.once('close', () => {
      if (!body.destroyed) body.destroy();
    });
    return this;
  }

  /** What to write last when a streamed body fails after the headers went out. */
  onStreamError(tail: (err: unknown) => Buffer): this {
    this.errorTail = tail;
    return this;
  }
}

export type HotHandler = (req: HotRequest, reply: HotReply) => Promise<unknown>;

export interface HotRoute {
  method: 'GET' | 'POST';
  path: string;
  dialect: Dialect;
  handler: HotHandler;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve(null);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        chunks.length = 0;
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks, size)));
    req.on('error', reject);
  });
}

/**
 * Wraps Fastify's request handler: proxy routes are served here, everything else falls through.
 * Errors the gateway makes use the dialect's error shape.
 */
export function hotServer(routes: readonly HotRoute[], bodyLimit: number, onError: (err: unknown, url: string) => void) {
  const table = new Map(routes.map((r) => [`${r.method} ${r.path}`, r]));
  return (fallback: (req: IncomingMessage, res: ServerResponse) => void): Server =>
    createServer((req, res) => {
      // `/t/<key>/…` becomes `/…` plus a pseudo-header, before routing (and any log) sees the URL.
      applyTenantPath(req);
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const route = table.get(`${req.method} ${path}`);
      if (!route) return fallback(req, res);
      const reply = new HotReply(res);
      const dialect: Dialect = route.dialect === 'anthropic' || /provider=anthropic/.test(url) ? 'anthropic' : 'openai';
      readBody(req, bodyLimit)
        .then((body) => {
          if (body === null) {
            const e = gatewayError(dialect, 413, 'request_too_large', `request body is over the ${bodyLimit} byte limit`);
            reply.code(413).header('content-type', 'application/json').header('connection', 'close').send(e.body);
            return;
          }
          const refused = checkBody(dialect, req.headers, body);
          if (refused) {
            reply.code(refused.status).header('content-type', 'application/json').send(refused.body);
            return;
          }
          const query = Object.fromEntries(new URLSearchParams(q < 0 ? '' : url.slice(q + 1)));
          return route.handler({ method: req.method ?? 'GET', url, headers: req.headers, query, body }, reply);
        })
        .catch((err: unknown) => {
          onError(err, url);
          if (!reply.sent) {
            const e = gatewayError(dialect, 500, 'internal_error', 'internal error');
            reply.code(500).header('content-type', 'application/json').send(e.body);
          } else res.destroy();
        });
    });
}
