// Tenancy in the embedded single process (`npm start`: PGlite, no Redis): the gateway hears the
// admin's changes on the in-process bus (its poll of the generation row still runs) and serves a
// new tenant's key, the control plane's `default` tenant for keyless traffic, and a revocation.
import { useEmbedded } from '../support/embedded-harness';
import { agentSteps, openaiTurn } from '../support/transcripts';

jest.setTimeout(60_000);

const TOKEN = 'embedded-tenancy-token-0123456789';
const MARKER = /<<cg:[0-9a-f]{16}>>/;
const raw = JSON.stringify(openaiTurn(agentSteps(10, 6), 10));

describe('tenancy in the embedded process', () => {
  const running = useEmbedded('embedded-tenancy', { ADMIN_TOKEN: TOKEN, PRESET: 'safe' });
  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(running().adminUrl + p, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  /** Waits until the gateway serves `generation` (announced on the bus; the poll backs it up). */
  const applied = async (generation: number) => {
    while ((running().gw.tenancy.sync?.status().generation ?? -1) < generation) await new Promise((r) => setTimeout(r, 10));
  };
  let n = 0;
  const compact = (headers: Record<string, string>) =>
    fetch(`${running().gatewayUrl}/compact?provider=openai&cache=off`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-context-guru-session': `e${++n}`, ...headers },
      body: raw,
    });

  it('a tenant created through the admin is served by its key; keyless traffic stays on PRESET', async () => {
    expect((await admin('POST', '/v1/tenants', { id: 'acme', name: 'Acme' })).status).toBe(201);
    const key = (await admin('POST', '/v1/tenants/acme/keys', {})).json.key as string;
    const v = await admin('POST', '/v1/tenants/acme/configs', { document: { preset: 'agent' }, activate: true });
    expect(v.status).toBe(201);
    await applied((await admin('GET', '/v1/tenants/acme')).json.generation);
    expect(await (await compact({ 'x-context-guru-key': key })).text()).toMatch(MARKER);
    expect(await (await compact({})).text()).not.toMatch(MARKER);
    const keys = (await admin('GET', '/v1/tenants/acme/keys')).json as Array<{ id: string }>;
    const revoked = await admin('DELETE', `/v1/tenants/acme/keys/${keys[0]!.id}`);
    expect(revoked.status).toBe(200);
    await applied((await admin('GET', '/v1/tenants/acme')).json.generation);
    expect((await compact({ 'x-context-guru-key': key })).status).toBe(401);
  });

  it("the control plane's default tenant takes over keyless traffic", async () => {
    expect((await admin('POST', '/v1/tenants', { id: 'default', name: 'Default' })).status).toBe(201);
    expect((await admin('POST', '/v1/tenants/default/configs', { document: { preset: 'agent' }, activate: true })).status).toBe(201);
    await applied((await admin('GET', '/v1/tenants/default')).json.generation);
    expect(await (await compact({})).text()).toMatch(MARKER);
  });
});
