// A scripted compaction model over real HTTP, speaking both dialects (Anthropic Messages on
// /v1/messages, OpenAI Chat Completions on /v1/chat/completions). It records every call — headers,
// body, the prompt text — so tests count model calls and check what the gateway sent.
import type { Dialect } from '@context-guru/components';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface ModelCall {
  dialect: Dialect;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** System prompt and user prompt as sent. */
  system: string;
  prompt: string;
}

export type ModelAnswer =
  { text: string; truncated?: boolean; inputTokens?: number; outputTokens?: number } | { status: number; body: string } | { hang: true };

export type ModelScript = (call: ModelCall) => ModelAnswer;

export interface FakeModelServer {
  url: string;
  calls: ModelCall[];
  setScript(script: ModelScript): void;
  close(): Promise<void>;
}

function promptsOf(dialect: Dialect, body: Record<string, unknown>): { system: string; prompt: string } {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ role?: string; content?: unknown }>) : [];
  const text = (c: unknown) => (typeof c === 'string' ? c : '');
  if (dialect === 'anthropic') return { system: text(body.system), prompt: text(messages[0]?.content) };
  return {
    system: text(messages.find((m) => m.role === 'system')?.content),
    prompt: text(messages.find((m) => m.role === 'user')?.content),
  };
}

function reply(res: ServerResponse, dialect: Dialect, model: unknown, a: Extract<ModelAnswer, { text: string }>): void {
  const input = a.inputTokens ?? 1000;
  const output = a.outputTokens ?? 100;
  const body =
    dialect === 'anthropic'
      ? {
          id: 'msg_model',
          type: 'message',
          role: 'assistant',
          model,
          content: [{ type: 'text', text: a.text }],
          stop_reason: a.truncated ? 'max_tokens' : 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: input, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: output },
        }
      : {
          id: 'chatcmpl-model',
          object: 'chat.completion',
          created: 1_700_000_000,
          model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: a.text, refusal: null },
              finish_reason: a.truncated ? 'length' : 'stop',
              logprobs: null,
            },
          ],
          usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
        };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export async function startFakeModel(script: ModelScript): Promise<FakeModelServer> {
  let current = script;
  const calls: ModelCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const dialect: Dialect = path.endsWith('/messages') ? 'anthropic' : 'openai';
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        res.writeHead(400).end('{"error":"invalid JSON"}');
        return;
      }
      const call: ModelCall = { dialect, path, headers: req.headers, body, ...promptsOf(dialect, body) };
      calls.push(call);
      const a = current(call);
      if ('hang' in a) return;
      if ('status' in a) {
        res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
        return;
      }
      reply(res, dialect, body.model, a);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    setScript: (s) => (current = s),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A reply carrying one fenced JavaScript program. */
export const program = (code: string): ModelAnswer => ({ text: `Here is the filter.\n\n\`\`\`javascript\n${code}\n\`\`\`\n` });
