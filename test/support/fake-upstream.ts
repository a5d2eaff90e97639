// An in-process provider for e2e tests: records every body the gateway sends (so tests can run
// the provider shape validator over them and compare prefixes across turns) and answers with a
// scripted model. It speaks both dialects, streaming and not.
import type { Dialect } from '@context-guru/components';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type { Dialect } from '@context-guru/components';

export interface RecordedRequest {
  dialect: Dialect;
  /** GET (model listings) and DELETE carry no body; they are recorded with `body` {}. */
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  raw: string;
  body: Record<string, unknown>;
}

export type ScriptedReply =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'sse'; events: string[]; chunkSize?: number; delayMs?: number }
  | { kind: 'raw'; status: number; body: string; headers?: Record<string, string> }
  /** Bytes of a given type written in pieces of `chunkSize` (Bedrock's binary event stream). */
  | { kind: 'bytes'; contentType: string; body: Buffer; chunkSize: number; headers?: Record<string, string> }
  | { kind: 'hang' }
  /** Headers and the first bytes of a body, then nothing more until the caller hangs up. */
  | { kind: 'hold'; contentType: string; head: string; written?: () => void };

export type Script = (req: RecordedRequest) => ScriptedReply;

export interface FakeUpstream {
  url: string;
  requests: RecordedRequest[];
  setScript(script: Script): void;
  /** Resolves once the caller closed the connection of `req` before its answer was complete. */
  hungUp(req: RecordedRequest): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeUpstream(script: Script): Promise<FakeUpstream> {
  let current = script;
  const requests: RecordedRequest[] = [];
  const hangUps = new WeakMap<RecordedRequest, Promise<void>>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = req.url ?? '';
      // Bedrock (/model/{id}/invoke…) and Vertex (…:rawPredict) carry Anthropic Messages too.
      const anthropic = url.includes('/messages') || url.startsWith('/model/') || url.includes('Predict');
      const dialect: Dialect = anthropic
        ? 'anthropic'
        : url.includes('/responses')
          ? 'responses'
          : url.includes('/models/')
            ? 'gemini'
            : 'openai';
      let body: Record<string, unknown> = {};
      try {
        if (raw !== '' || (req.method !== 'GET' && req.method !== 'DELETE')) body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"fake upstream got invalid JSON"}');
        return;
      }
      const rec: RecordedRequest = { dialect, method: req.method ?? 'POST', path: req.url ?? '', headers: req.headers, raw, body };
      requests.push(rec);
      hangUps.set(rec, new Promise<void>((resolve) => res.once('close', () => !res.writableFinished && resolve())));
      const reply = current(rec);
      void send(res, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setScript: (s) => (current = s),
    hungUp: (rec) => hangUps.get(rec) ?? Promise.reject(new Error('not a request this upstream received')),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function send(res: ServerResponse, reply: ScriptedReply): Promise<void> {
  if (reply.kind === 'hang') return;
  if (reply.kind === 'hold') {
    res.writeHead(200, { 'content-type': reply.contentType });
    res.write(reply.head, () => reply.written?.());
    return;
  }
  if (reply.kind === 'json') {
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
    res.end(JSON.stringify(reply.body));
    return;
  }
  if (reply.kind === 'raw') {
    res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
    res.end(reply.body);
    return;
  }
  const sse = reply.kind === 'sse';
  res.writeHead(
    200,
    sse ? { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } : { 'content-type': reply.contentType, ...reply.headers },
  );
  const size = reply.chunkSize ?? 37;
  // Odd chunk sizes split SSE lines (and UTF-8 sequences) at awkward places, as real networks do.
  const bytes = sse ? Buffer.from(reply.events.join(''), 'utf8') : reply.body;
  const delayMs = sse ? reply.delayMs : undefined;
  for (let i = 0; i < bytes.length; i += size) {
    if (res.destroyed) return;
    res.write(bytes.subarray(i, i + size));
    await new Promise((r) => (delayMs ? setTimeout(r, delayMs) : setImmediate(r)));
  }
  res.end();
}
