// A transparent recorder between an agent CLI and the gateway: it keeps every request body exactly
// as the client sent it, then forwards it unchanged and streams the reply back as it arrives.
// The assertions need the client's own bodies to tell what the gateway changed from what the
// client changed itself (Claude Code rewrites its own system message between turns), and the
// rewrite header of each answer, which tells a planned rewrite from a bust.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { listenLoopback } from './loopback-server';
import type { RecordedRequest } from '../fake-upstream';

/** A client request and what the gateway's answer announced about it. */
interface TappedRequest extends RecordedRequest {
  /** The `x-context-guru-rewrite` header of the answer (a planned rewrite), when it had one. */
  rewrite?: string;
}

export interface RecordingTap {
  url: string;
  requests: TappedRequest[];
  close(): Promise<void>;
}

function record(req: IncomingMessage, raw: Buffer): RecordedRequest {
  const text = raw.toString('utf8');
  let body: Record<string, unknown> = {};
  try {
    if (text) body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // kept as raw only; the gateway answers the client's malformed body itself
  }
  const path = req.url ?? '';
  return {
    // Bedrock's and Vertex's paths carry Anthropic Messages too.
    dialect:
      path.includes('/messages') || path.startsWith('/bedrock/') || path.startsWith('/vertex/')
        ? 'anthropic'
        : path.includes('/responses')
          ? 'responses'
          : 'openai',
    method: req.method ?? 'POST',
    path,
    headers: req.headers,
    raw: text,
    body,
  };
}

export async function startRecordingTap(target: string): Promise<RecordingTap> {
  const requests: TappedRequest[] = [];
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const tapped: TappedRequest = record(req, raw);
      requests.push(tapped);
      const out = request(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
        (up) => {
          const rewrite = up.headers['x-context-guru-rewrite'];
          if (typeof rewrite === 'string') tapped.rewrite = rewrite;
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      out.end(raw);
    });
  });
  return { ...(await listenLoopback(server)), requests };
}
