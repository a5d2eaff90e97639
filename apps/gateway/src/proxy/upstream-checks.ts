// A provider's 2xx answer to a chat request is JSON or an event stream. Anything else (an HTML
// page from a proxy in between, a truncated body) is a faulty upstream: the client gets a 502 in
// its dialect's shape instead of a 200 its SDK cannot parse. Only the first bytes are logged.
import { type ClientReply } from '@context-guru/engine';
import { isEventStream } from '../expand/expand-loop';
import { headerValue, mediaType } from '../http/forward-headers';

const LOG_BYTES = 200;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;

/**
 * The first bytes of a 2xx reply that is not JSON (for the log), or null when it is fine. Settled
 * at once unless a streamed body must be peeked (a promise then), so the usual answer costs no
 * extra turn before it is relayed.
 */
export function nonJsonSuccess(result: ClientReply): string | null | Promise<string> {
  if (result.status < 200 || result.status >= 300 || isEventStream(result.headers)) return null;
  const type = mediaType(headerValue(result.headers, 'content-type') ?? '');
  if (Buffer.isBuffer(result.body)) {
    if (JSON_TYPE.test(type) && isJson(result.body)) return null;
    return result.body.subarray(0, LOG_BYTES).toString('utf8');
  }
  // Streamed JSON is not buffered to be checked; its declared type is.
  if (JSON_TYPE.test(type) || type === '') return null;
  return firstBytes(result.body);
}

async function firstBytes(body: AsyncIterable<unknown>): Promise<string> {
  let first = '';
  for await (const chunk of body) {
    first = Buffer.from(chunk as Buffer)
      .subarray(0, LOG_BYTES)
      .toString('utf8');
    break; // leaving the loop destroys the upstream body and releases its socket
  }
  return first;
}

function isJson(body: Buffer): boolean {
  try {
    JSON.parse(body.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}
