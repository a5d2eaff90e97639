// Fake Bedrock and Vertex in front of a scripted Anthropic model. Bedrock: every request must carry
// a SigV4 signature that verifies with the known test key over the exact bytes received, and a
// streamed answer is sent as the event stream framing (chunks of base64 Anthropic events, with
// Bedrock's padding field). Vertex: every request must carry the bearer token the fake token
// endpoint issued. Framing and verification are written here from the specifications, apart from
// the gateway's own code, so the tests do not grade the gateway against itself.
import { createHash, createHmac, createVerify, generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import type { RecordedRequest, Script, ScriptedReply } from './fake-upstream';

export const TEST_KEY = { id: 'AKIDCGTESTKEY0000001', secret: 'cg/test/secret+key/for+the/fake+bedrock0', token: 'cg-session-token' };
export const TEST_REGION = 'us-west-2';

const header = (r: RecordedRequest, name: string): string => {
  const v = r.headers[name];
  return Array.isArray(v) ? v.join(',') : (v ?? '');
};

const sha256 = (d: string | Buffer) => createHash('sha256').update(d).digest('hex');
const hmacSha = (key: Buffer | string, d: string) => createHmac('sha256', key).update(d).digest();
const awsEscape = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

/** Why the request's SigV4 signature does not verify, or null when it does. */
function sigv4Problem(r: RecordedRequest): string | null {
  const auth =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/bedrock\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      header(r, 'authorization'),
    );
  if (!auth) return `no SigV4 authorization: ${header(r, 'authorization') || '(none)'}`;
  const [, keyId, day, region, signed, signature] = auth as unknown as string[];
  if (keyId !== TEST_KEY.id) return `signed with key ${keyId}`;
  if (region !== TEST_REGION) return `signed for region ${region}`;
  if (header(r, 'x-amz-security-token') !== TEST_KEY.token) return 'the session token is missing';
  const names = signed!.split(';');
  for (const need of ['host', 'x-amz-date', 'x-amz-security-token']) if (!names.includes(need)) return `${need} is not signed`;
  const path = r.path.split('?')[0]!;
  const canonical = [
    r.method,
    path.split('/').map(awsEscape).join('/'),
    '',
    names.map((n) => `${n}:${header(r, n).trim()}\n`).join(''),
    signed,
    sha256(Buffer.from(r.raw, 'utf8')),
  ].join('\n');
  const scope = `${day}/${region}/bedrock/aws4_request`;
  const sts = `AWS4-HMAC-SHA256\n${header(r, 'x-amz-date')}\n${scope}\n${sha256(canonical)}`;
  let key: Buffer = hmacSha(`AWS4${TEST_KEY.secret}`, day!);
  for (const part of [region!, 'bedrock', 'aws4_request']) key = hmacSha(key, part);
  return hmacSha(key, sts).toString('hex') === signature ? null : 'the signature does not match the request';
}

function frame(headers: Array<[string, string]>, payload: Buffer): Buffer {
  const hs = Buffer.concat(
    headers.map(([k, v]) => {
      const kb = Buffer.from(k);
      const vb = Buffer.from(v);
      const len = Buffer.alloc(2);
      len.writeUInt16BE(vb.length);
      return Buffer.concat([Buffer.from([kb.length]), kb, Buffer.from([7]), len, vb]);
    }),
  );
  const total = 16 + hs.length + payload.length;
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(hs.length, 4);
  const pcrc = Buffer.alloc(4);
  pcrc.writeUInt32BE(crc32(prelude));
  const body = Buffer.concat([prelude, pcrc, hs, payload]);
  const mcrc = Buffer.alloc(4);
  mcrc.writeUInt32BE(crc32(body));
  return Buffer.concat([body, mcrc]);
}

/** Anthropic SSE text as Bedrock frames it: one chunk per event, base64 JSON plus a padding field. */
export function bedrockFrames(sse: string): Buffer {
  const out: Buffer[] = [];
  for (const block of sse.split('\n\n')) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .join('\n');
    if (!data) continue;
    const payload = JSON.stringify({
      bytes: Buffer.from(data).toString('base64'),
      p: 'abcdefghijklmnopqrstuvwxyzABCDEF'.slice(0, 1 + (out.length % 30)),
    });
    out.push(
      frame(
        [
          [':event-type', 'chunk'],
          [':content-type', 'application/json'],
          [':message-type', 'event'],
        ],
        Buffer.from(payload),
      ),
    );
  }
  return Buffer.concat(out);
}

export function bedrockException(type: string, message: string): Buffer {
  return frame(
    [
      [':exception-type', type],
      [':content-type', 'application/json'],
      [':message-type', 'exception'],
    ],
    Buffer.from(JSON.stringify({ message })),
  );
}

export interface ReadFrame {
  headers: Record<string, string>;
  payload: Buffer;
}

/** The client's side: frames read back with both checksums verified (a bad one throws). */
export function readFrames(bytes: Buffer): ReadFrame[] {
  const out: ReadFrame[] = [];
  for (let at = 0; at < bytes.length;) {
    const total = bytes.readUInt32BE(at);
    const hlen = bytes.readUInt32BE(at + 4);
    const f = bytes.subarray(at, at + total);
    if (crc32(f.subarray(0, 8)) !== f.readUInt32BE(8)) throw new Error(`frame at ${at}: bad prelude crc`);
    if (crc32(f.subarray(0, total - 4)) !== f.readUInt32BE(total - 4)) throw new Error(`frame at ${at}: bad message crc`);
    const headers: Record<string, string> = {};
    for (let h = 12; h < 12 + hlen;) {
      const n = f[h]!;
      const name = f.subarray(h + 1, h + 1 + n).toString();
      const len = f.readUInt16BE(h + 2 + n);
      headers[name] = f.subarray(h + 4 + n, h + 4 + n + len).toString();
      h += 4 + n + len;
    }
    out.push({ headers, payload: f.subarray(12 + hlen, total - 4) });
    at += total;
  }
  return out;
}

/** The Anthropic SSE a Bedrock client reads out of the frames (what its SDK hands the stream parser). */
export function framesToSse(frames: ReadFrame[]): string {
  return frames
    .filter((f) => f.headers[':message-type'] === 'event')
    .map((f) => {
      const json = Buffer.from((JSON.parse(f.payload.toString()) as { bytes: string }).bytes, 'base64').toString();
      return `event: ${(JSON.parse(json) as { type: string }).type}\ndata: ${json}\n\n`;
    })
    .join('');
}

/**
 * The cloud in front of an Anthropic script: signatures (Bedrock) or tokens (Vertex) are checked,
 * streamed Bedrock answers framed, and the request handed on with a stable credential header (the
 * caching simulator keys caches by credential; a signature differs on every call).
 */
export interface CloudWatch {
  /** Why a request was refused (a signature or token that did not verify). */
  problems: string[];
  /** The bytes of each event stream Bedrock sent, in order. */
  sent: Buffer[];
  vertexToken: () => string | undefined;
  /** Unsigned requests are refused (a direct run with CLAUDE_CODE_SKIP_*_AUTH sends none: false). */
  requireAuth?: boolean;
}

export function cloudScript(script: Script, watch: CloudWatch): Script {
  const { problems, vertexToken } = watch;
  return (r) => {
    const bedrock = r.path.startsWith('/model/');
    // Anything else (Claude Code's inference-profile listing on a direct run) is the model's to answer.
    if (!bedrock && !r.path.includes('Predict')) return script(r);
    const problem =
      watch.requireAuth === false
        ? null
        : bedrock
          ? sigv4Problem(r)
          : header(r, 'authorization') === `Bearer ${vertexToken()}`
            ? null
            : 'wrong Vertex bearer token';
    if (problem) {
      problems.push(`${r.path}: ${problem}`);
      return { kind: 'raw', status: 403, body: JSON.stringify({ message: problem }) };
    }
    // The path says whether the answer streams: the model behind reads it as the Messages API's
    // flag, and one stable credential (a signature differs per call; caches are per key). The
    // request is lent changed and given back as recorded, so its identity stays the log's.
    const { body, headers } = r;
    const streamed = r.path.endsWith('/invoke-with-response-stream') || r.path.endsWith(':streamRawPredict');
    let reply: ScriptedReply;
    try {
      if (streamed) r.body = { ...body, stream: true };
      r.headers = { ...headers, authorization: bedrock ? 'aws-test-key' : 'vertex-test' };
      reply = script(r);
    } finally {
      r.body = body;
      r.headers = headers;
    }
    if (!bedrock || reply.kind !== 'sse') return reply;
    const frames = bedrockFrames(reply.events.join(''));
    watch.sent.push(frames);
    return { kind: 'bytes', contentType: 'application/vnd.amazon.eventstream', body: frames, chunkSize: reply.chunkSize ?? 53 };
  };
}

export interface FakeTokenEndpoint {
  url: string;
  /** The service-account key file content pointing at this endpoint. */
  keyFile: string;
  /** The token issued last (undefined before the first exchange). */
  issued(): string | undefined;
  grants: number;
  close(): Promise<void>;
}

/** Google's OAuth2 token endpoint, issuing a token only for an assertion signed by its key. */
export async function startFakeTokenEndpoint(): Promise<FakeTokenEndpoint> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let issued: string | undefined;
  const state = { grants: 0 };
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(parts).toString());
      const [h, c, s] = (form.get('assertion') ?? '').split('.');
      const ok =
        form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer' &&
        !!s &&
        createVerify('RSA-SHA256').update(`${h}.${c}`).verify(publicKey, Buffer.from(s, 'base64url')) &&
        (JSON.parse(Buffer.from(c!, 'base64url').toString()) as { scope?: string }).scope ===
          'https://www.googleapis.com/auth/cloud-platform';
      if (!ok) return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
      state.grants++;
      issued = `ya29.fake-${state.grants}`;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: issued, expires_in: 3599, token_type: 'Bearer' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  const key = {
    type: 'service_account',
    client_email: 'cg-test@proj.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    token_uri: url,
  };
  return {
    url,
    keyFile: JSON.stringify(key),
    issued: () => issued,
    get grants() {
      return state.grants;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
