// AWS Signature Version 4 for the requests the gateway sends Bedrock. The client's own signature
// cannot survive a rewritten body (it covers the body's hash), so the gateway signs every upstream
// call itself — the first and each expand continuation — over the exact bytes it sends. Only
// node:crypto is needed; the published test-suite vectors pin the algorithm (its unit test).
import { createHash, createHmac } from 'node:crypto';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignInput {
  method: string;
  url: URL;
  /** Headers sent besides those the signature adds (names lower case). */
  headers: Record<string, string>;
  /** The exact body bytes (chunks are hashed in order). */
  body: string | Buffer | readonly Buffer[];
  region: string;
  service: string;
  now: Date;
}

/** Headers the signature covers when sent: the target and content type, and the x-amz-* ones. */
const SIGNED = (name: string): boolean => name === 'host' || name === 'content-type' || name.startsWith('x-amz-');

const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 encoding: encodeURIComponent leaves !'()* as they are; SigV4 does not. */
function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The canonical path: each segment of the path as sent, encoded again (every service but S3 signs
 * the doubly encoded path, so an ARN's `%3A` is signed as `%253A`).
 */
function canonicalPath(pathname: string): string {
  return pathname
    .split('/')
    .map((seg) => rfc3986(seg))
    .join('/');
}

function canonicalQuery(url: URL): string {
  const pairs = [...url.searchParams.entries()].map(([k, v]) => [rfc3986(k), rfc3986(v)] as const);
  pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

function payloadHash(body: SignInput['body']): string {
  const h = createHash('sha256');
  if (typeof body === 'string' || Buffer.isBuffer(body)) h.update(body);
  else for (const c of body) h.update(c);
  return h.digest('hex');
}

/** `20150830T123600Z` */
function amzDate(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/**
 * The headers to add to the request (host, x-amz-date, x-amz-security-token, authorization): the
 * caller sends them with its own, unchanged.
 */
export function signV4(input: SignInput, creds: AwsCredentials): Record<string, string> {
  const stamp = amzDate(input.now);
  const day = stamp.slice(0, 8);
  const added: Record<string, string> = { host: input.url.host, 'x-amz-date': stamp };
  if (creds.sessionToken) added['x-amz-security-token'] = creds.sessionToken;
  const all: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...input.headers, ...added })) all[k.toLowerCase()] = v;
  const names = Object.keys(all).filter(SIGNED).sort();
  const canonicalHeaders = names.map((n) => `${n}:${(all[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const request = [
    input.method.toUpperCase(),
    canonicalPath(input.url.pathname),
    canonicalQuery(input.url),
    canonicalHeaders,
    signedHeaders,
    payloadHash(input.body),
  ].join('\n');
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', stamp, scope, createHash('sha256').update(request, 'utf8').digest('hex')].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${creds.secretAccessKey}`, day), input.region), input.service), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign, 'utf8').digest('hex');
  added['authorization'] =
    `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return added;
}
