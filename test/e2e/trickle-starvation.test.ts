// 500 keyless connections that send their headers and one byte of body, and then nothing, must not
// stall a keyed tenant's request. Before, they took every one of the 128 places among the bodies
// read whole and the keyed request waited unread behind them (for Node's 300 s request timeout);
// now one client (tenant and address) reads at most BODY_SLOTS_PER_CLIENT bodies at once.
import { connect, type Socket } from 'node:net';
import { useEmbedded } from '../support/embedded-harness';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { openAiCompletion } from '../support/fake-upstream-json';

jest.setTimeout(90_000);

const TOKEN = 'trickle-starvation-admin-token-0123';
const TRICKLERS = 500;
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream(() => ({ kind: 'json', body: openAiCompletion('ok') }));
  process.env.CG_TRICKLE_UPSTREAM = upstream.url;
});
afterAll(() => upstream.close());

describe('trickling bodies', () => {
  const running = useEmbedded('trickle', {
    ADMIN_TOKEN: TOKEN,
    PRESET: 'agent',
    get OPENAI_UPSTREAM() {
      return process.env.CG_TRICKLE_UPSTREAM ?? '';
    },
  } as Record<string, string>);
  const sockets: Socket[] = [];

  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(running().adminUrl + p, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as Record<string, unknown>;
  };

  it('leave a keyed request served while they hold their connections', async () => {
    await admin('POST', '/v1/tenants', { id: 'acme', name: 'Acme' });
    const key = (await admin('POST', '/v1/tenants/acme/keys', {})).key as string;
    const generation = (await admin('GET', '/v1/tenants/acme')).generation as number;
    while ((running().gw.tenancy.sync?.status().generation ?? -1) < generation) await new Promise((r) => setTimeout(r, 10));

    const { port } = new URL(running().gatewayUrl);
    const opened = Array.from(
      { length: TRICKLERS },
      (_, i) =>
        new Promise<void>((resolve) => {
          const s = connect(Number(port), '127.0.0.1', () => {
            s.write(
              `POST /openai/v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
                `x-context-guru-session: trickle-${i}\r\ncontent-length: 100000\r\n\r\n{`,
              () => resolve(),
            );
          });
          s.on('error', () => undefined);
          sockets.push(s);
        }),
    );
    await Promise.all(opened);
    const bodies = running().gw.bodies;
    // Every trickler has reached the gateway: reading its body or waiting for a place.
    while (bodies.inUse + bodies.waiters < TRICKLERS) await new Promise((r) => setTimeout(r, 20));

    try {
      const res = await fetch(`${running().gatewayUrl}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-context-guru-key': key },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
        // Failure detector only (the request waited 300 s before).
        signal: AbortSignal.timeout(20_000),
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('ok');
      // Served while every trickler still holds its connection.
      expect(sockets.filter((s) => s.destroyed || s.readyState !== 'open')).toHaveLength(0);
    } finally {
      // Also on a failure: the embedded process's close waits for open connections.
      for (const s of sockets) s.destroy();
    }
  });
});
