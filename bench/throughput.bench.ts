// Requests per second at 60 KB bodies: the gateway (presets off and agent) against a bare
// node:http + undici pass-through on the same machine in the same run, both in front of the same
// fast fake provider. Reports the ratio, which is what the targets are stated in.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { startGateway } from '../test/support/gateway-harness';
import { agentSteps, openaiTurn } from '../test/support/transcripts';
import { table } from './bench-util';

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 32;

/** The transcript turn whose body is closest to 60 KB. */
function body60k(): string {
  const steps = agentSteps(40, 5);
  let best = '';
  for (let t = 1; t <= 40; t++) {
    const raw = JSON.stringify(openaiTurn(steps, t));
    if (!best || Math.abs(raw.length - 60_000) < Math.abs(best.length - 60_000)) best = raw;
  }
  return best;
}

const ANSWER = JSON.stringify({ id: 'chatcmpl-b', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

/** A provider that answers at once without parsing: the bench measures the proxies, not it. */
export async function leanUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); } };
}

async function bareProxy(upstreamUrl: string): Promise<{ url: string; close: () => Promise<void> }> {
  const dispatcher = new Agent({ connections: 128, keepAliveTimeout: 30_000 });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        const r = await request(`${upstreamUrl}/v1/chat/completions`, { method: 'POST', body: Buffer.concat(chunks), headers: { 'content-type': 'application/json' }, dispatcher });
        res.writeHead(r.statusCode, { 'content-type': String(r.headers['content-type'] ?? 'application/json') });
        for await (const c of r.body) res.write(c);
        res.end();
      } catch {
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); await dispatcher.close(); } };
}

async function rps(url: string, path: string, bodyFile: string, session: boolean): Promise<number> {
  // Async on purpose: the servers under test share this process's event loop.
  const { stdout: out } = await promisify(execFile)(process.execPath, [join(__dirname, 'load-client.cjs'), `${url}${path}`, bodyFile, String(CONNECTIONS), String(DURATION_S), session ? '1' : '0'], { encoding: 'utf8' });
  const r = JSON.parse(out) as { rps: number; non2xx: number };
  if (r.non2xx) throw new Error(`${r.non2xx} non-2xx responses from ${url}${path}`);
  return r.rps;
}

export async function runThroughput(): Promise<string> {
  const upstream = await leanUpstream();
  const body = body60k();
  const bodyFile = join(tmpdir(), `cg-bench-body-${process.pid}.json`);
  writeFileSync(bodyFile, body);
  const bare = await bareProxy(upstream.url);
  const rows: string[][] = [];
  try {
    const base = await rps(bare.url, '/v1/chat/completions', bodyFile, false);
    rows.push(['bare node:http + undici', base.toFixed(0), '100 %']);
    for (const preset of (process.env.BENCH_PRESETS ?? 'off,agent').split(',')) {
      const gw = await startGateway(upstream.url, { PRESET: preset });
      try {
        const r = await rps(gw.url, '/openai/v1/chat/completions', bodyFile, true);
        rows.push([`context-guru, preset ${preset}`, r.toFixed(0), `${((r / base) * 100).toFixed(0)} %`]);
      } finally {
        await gw.close();
      }
    }
  } finally {
    await bare.close();
    await upstream.close();
  }
  return `${(body.length / 1000).toFixed(0)} KB body, ${CONNECTIONS} connections, ${DURATION_S} s each\n\n${table(['server', 'req/s', 'vs bare'], rows)}`;
}
