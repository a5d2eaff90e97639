// The embedded single process (`npm start`): gateway and admin on one PGlite and one in-process
// generation bus. A write through the admin is announced on the bus the gateway listens to, and an
// original the gateway stashed is readable through the admin's ops expand — same stores.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbedded, type Embedded } from '@context-guru/embedded';
import { parseEnv } from '@context-guru/gateway';
import { agentSteps, openaiTurn } from '../support/transcripts';

jest.setTimeout(60_000);

const TOKEN = 'embedded-test-token-0123456789';

describe('the embedded process', () => {
  let app: Embedded;
  let dataDir: string;
  const heard: number[] = [];
  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(app.adminUrl + p, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cg-embedded-'));
    app = await startEmbedded(
      parseEnv({
        PORT: '0',
        ADMIN_PORT: '0',
        DATA_DIR: dataDir,
        ADMIN_TOKEN: TOKEN,
        PRESET: 'agent',
        LOG_LEVEL: 'error',
        COMPACT_PRESET_OVERRIDE: 'true',
      }),
    );
    app.bus.subscribe((g) => heard.push(g));
  });
  afterAll(async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves both apps on PGlite and announces each served change on the in-process bus', async () => {
    expect(app.gw.durable?.kind).toBe('pglite');
    expect((await fetch(`${app.gatewayUrl}/healthz`)).status).toBe(200);
    const t = await admin('POST', '/v1/tenants', { id: 'default', name: 'Default' });
    expect(t.status).toBe(201);
    const v = await admin('POST', '/v1/tenants/default/configs', { document: 'preset: safe\n', activate: true });
    expect(v.json).toMatchObject({ version: 1, active: true });
    expect(heard).toEqual([1, 2]);
    expect(t.json.generation).toBe(1);
  });

  it("an original the gateway stashed is found by the admin's ops expand, and the expand is audited", async () => {
    const raw = JSON.stringify(openaiTurn(agentSteps(12, 4), 12));
    const res = await fetch(`${app.gatewayUrl}/compact?provider=openai&preset=agent&cache=off`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-context-guru-session': 'emb-1' },
      body: raw,
    });
    const out = await res.text();
    const id = /<<cg:([0-9a-f]{16})>>/.exec(out)![1]!;
    const got = await admin('POST', '/v1/ops/expand', { tenant: 'default', id, reason: 'support ticket 7' });
    expect(got.status).toBe(200);
    expect(raw).toContain(JSON.stringify(got.json.original).slice(1, 60));
    const audit = await admin('GET', '/v1/audit?action=ops.expand');
    expect(audit.json[0]).toMatchObject({
      action: 'ops.expand',
      tenant: 'default',
      target: id,
      reason: 'support ticket 7',
      actor: 'bootstrap',
    });
    // Three rows of this test, after the keyed `audit.sealed` row the seal's first use appends.
    expect((await admin('GET', '/v1/audit/verify')).json).toEqual({ ok: true, checked: 4 });
    expect((await admin('GET', '/v1/audit?action=audit.sealed')).json).toHaveLength(1);
  });
});
