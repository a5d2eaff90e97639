// The two edges where a cloud route differs from the Anthropic one. Going up: the client's
// credentials are dropped and the gateway's own are added, computed over the exact body of each
// call (SigV4 covers its hash). Coming back: Bedrock's event stream is read as Anthropic SSE (so
// the expand loop, the stitcher and the usage watch work unchanged), and what the client gets is
// framed again — relayed frames as their own bytes, written ones with fresh checksums.
import { pipeline, type Readable } from 'node:stream';
import type { ClientReply, UpstreamReply } from '@context-guru/engine';
import { isEventStream } from '../expand/expand-loop';
import { headerValue, mediaType } from '../http/forward-headers';
import { streamErrorEvent } from '../http/gateway-errors';
import { EVENTSTREAM_TYPE, EventstreamToSse, framesOfSse, SseToEventstream } from './bedrock-stream';
import { isClientCredential, type CloudAuth } from './cloud-auth';
import type { CloudTarget } from './cloud-path';

type Body = string | Buffer | readonly Buffer[] | Readable;

/** The headers of one upstream call to the cloud: the client's minus its credentials, plus the gateway's. */
export async function cloudHeaders(
  cloud: { target: CloudTarget; auth: CloudAuth },
  headers: Record<string, string>,
  body: Body,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k in headers) if (!isClientCredential(k, cloud.target.provider)) out[k] = headers[k] ?? '';
  // A cloud route never streams its body upstream (prepare.step): the signature needs the bytes.
  if (typeof body !== 'string' && !Buffer.isBuffer(body) && !Array.isArray(body))
    throw new Error('a cloud route body must be bytes to be signed');
  return {
    ...out,
    ...(await cloud.auth({ url: cloud.target.upstreamUrl, headers: out, body: body as string | Buffer | readonly Buffer[] })),
  };
}

const isEventstream = (headers: UpstreamReply['headers']): boolean =>
  mediaType(headerValue(headers, 'content-type') ?? '') === EVENTSTREAM_TYPE;

/** Bedrock's answer as the Anthropic route would have had it: an event stream becomes SSE. */
export function fromCloud(target: CloudTarget, reply: UpstreamReply): UpstreamReply {
  if (target.provider !== 'bedrock' || !isEventstream(reply.headers)) return reply;
  const headers: UpstreamReply['headers'] = {};
  for (const k in reply.headers)
    if (k.toLowerCase() !== 'content-length' && k.toLowerCase() !== 'content-type') headers[k] = reply.headers[k];
  headers['content-type'] = 'text/event-stream';
  // pipeline: a decode error fails the SSE side, and a consumer that stops releases the socket.
  const sse = pipeline(reply.body, new EventstreamToSse(), () => undefined);
  return { ...reply, headers, body: sse };
}

/** What the client of a Bedrock stream gets: the (stitched) SSE framed back into an event stream. */
export function toCloudClient(target: CloudTarget, result: ClientReply): ClientReply {
  if (target.provider !== 'bedrock' || Buffer.isBuffer(result.body) || !isEventStream(result.headers)) return result;
  const headers: ClientReply['headers'] = {};
  for (const k in result.headers) if (k.toLowerCase() !== 'content-type') headers[k] = result.headers[k];
  headers['content-type'] = EVENTSTREAM_TYPE;
  return { ...result, headers, body: pipeline(result.body, new SseToEventstream(), () => undefined) };
}

/** The last frame of a Bedrock stream that failed after the client had its headers: the Anthropic route's error, as an exception. */
export function cloudStreamError(err: unknown, idleMs: number): Buffer {
  return framesOfSse(streamErrorEvent('anthropic', err, idleMs).toString('utf8'));
}
