// Reading a request body within bounds: at most `limit` bytes kept, and the whole body within
// `timeoutMs` of the read starting, so a client that trickles its body cannot hold a place among
// the bodies read whole (BodySlots) for Node's 300 s request timeout. A body declared over the
// limit is answered before it is read, and then read and thrown away (up to `discardBytes`) before
// the connection closes: closing a socket with the client's bytes still arriving resets it, and a
// client that sends its whole body before reading the answer then sees the reset, not the 413.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyCollector } from './body-collector';
import type { GatewayErrorBody } from './gateway-errors';

export interface BodyLimits {
  /** BODY_LIMIT_BYTES: the largest body read. */
  limit: number;
  /** BODY_READ_TIMEOUT_MS: the longest a body may take to arrive once its read starts. */
  timeoutMs: number;
  /** BODY_DISCARD_BYTES: a body declared over the limit but within this is drained before closing. */
  discardBytes: number;
}

/** The body did not arrive within BODY_READ_TIMEOUT_MS. */
export class BodyReadTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the request body did not arrive within ${timeoutMs} ms`);
  }
}

/** Calls `expired` unless the body of `req` completes (or its client goes) within `ms`. */
export function bodyDeadline(req: IncomingMessage, ms: number, expired: () => void): void {
  if (req.complete) return;
  const timer = setTimeout(() => {
    if (!req.complete && !req.destroyed) expired();
  }, ms);
  const clear = () => clearTimeout(timer);
  req.once('end', clear);
  req.once('close', clear);
}

/** The body, or null when it went over the limit; a timeout or a client gone rejects. */
export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limits.limit) {
      req.resume();
      resolve(null);
      return;
    }
    // A client gone before its body is read (it waited for a place among the bodies held whole):
    // its stream is destroyed and will emit nothing more, so waiting for it would never settle.
    if (req.destroyed) {
      reject(new Error('aborted: the client went away before its body was read'));
      return;
    }
    const body = new BodyCollector(Number.isFinite(declared) ? declared : -1, limits.limit);
    bodyDeadline(req, limits.timeoutMs, () => {
      req.pause();
      reject(new BodyReadTimeout(limits.timeoutMs));
    });
    req.on('data', (c: Buffer) => body.add(c));
    req.on('end', () => resolve(body.done()));
    req.on('error', reject);
    req.once('close', () => {
      if (!req.complete) reject(new Error('aborted: the client went away mid-body'));
    });
  });
}

/**
 * Answers `refusal` to a request whose body has not been read, and closes the connection once the
 * body is drained — at once when it is declared larger than `discardBytes` (reading that much
 * only to refuse it costs more than a client that does not read early answers is owed), and when
 * the drain outlasts the read timeout.
 */
export function refuseUnread(req: IncomingMessage, res: ServerResponse, refusal: GatewayErrorBody, limits: BodyLimits): void {
  const body = Buffer.from(refusal.body);
  res.writeHead(refusal.status, { 'content-type': 'application/json', 'content-length': String(body.length), connection: 'close' });
  const declared = Number(req.headers['content-length']);
  if (req.complete || !(declared <= limits.discardBytes)) {
    res.end(body);
    req.resume();
    return;
  }
  // The whole answer goes out now; ending the response (which closes the socket) waits for the body.
  res.write(body);
  const finish = () => {
    clearTimeout(timer);
    if (!res.writableEnded) res.end();
  };
  const timer = setTimeout(finish, limits.timeoutMs);
  req.once('end', finish);
  req.once('close', finish);
  req.resume();
}
