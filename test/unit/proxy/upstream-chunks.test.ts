// A body handed over as chunks goes upstream as their bytes in order, under an exact
// content-length (not chunked transfer-encoding), and leaves the caller's headers as they were.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JOIN_BELOW_BYTES } from '../../../libs/engine/src/wire/out-chunks';
import { chunked, UpstreamClient } from '../../../apps/gateway/src/http/upstream.client';

describe('UpstreamClient.post with chunks', () => {
  it('sends the chunks whole, in order, with their total as content-length', async () => {
    const seen: Array<{ headers: IncomingHttpHeaders; body: Buffer }> = [];
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        seen.push({ headers: req.headers, body: Buffer.concat(parts) });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new UpstreamClient({ headersTimeoutMs: 5_000, idleTimeoutMs: 5_000, connectTimeoutMs: 5_000 });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
      // Big enough to go out as an iterable of chunks (a small one is joined first).
      const whole = Buffer.from(`{"messages":[{"content":"ünïcödé 🚀"},{"content":"${'x'.repeat(JOIN_BELOW_BYTES)}"}],"model":"m"}`);
      const chunks = [whole.subarray(0, 20), whole.subarray(20, 21), whole.subarray(21)];
      const headers = { 'content-type': 'application/json' };
      for (const body of [chunks, [whole], '{"after":"é"}']) {
        const r = await client.post(url, headers, body);
        await r.body.resume();
      }
      expect(seen.map((s) => s.body.toString('utf8'))).toEqual([whole.toString('utf8'), whole.toString('utf8'), '{"after":"é"}']);
      expect(seen[0]!.body.equals(whole)).toBe(true);
      expect(seen.map((s) => s.headers['content-length'])).toEqual([String(whole.length), String(whole.length), '14']);
      expect(seen.map((s) => s.headers['transfer-encoding'])).toEqual([undefined, undefined, undefined]);
      expect(headers).toEqual({ 'content-type': 'application/json' });
    } finally {
      await client.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('joins a small chunked body into one buffer (one socket write), and leaves a large one in chunks', () => {
    const headers = { 'content-type': 'application/json' };
    const small = [Buffer.from('{"a":'), Buffer.from('"é"'), Buffer.from('}')];
    const joined = chunked(headers, small);
    expect(Buffer.isBuffer(joined.body)).toBe(true);
    expect(joined.body.toString('utf8')).toBe('{"a":"é"}');
    expect(joined.headers).toBe(headers); // undici measures a buffer itself

    const big = [Buffer.alloc(JOIN_BELOW_BYTES, 0x61), Buffer.from('b')];
    const kept = chunked(headers, big);
    expect(kept.body).toBe(big);
    expect(kept.headers).toEqual({ ...headers, 'content-length': String(JOIN_BELOW_BYTES + 1) });
    expect(headers).toEqual({ 'content-type': 'application/json' });
  });
});
