// The embedded process (`npm start`) in-process on ephemeral ports over a throwaway DATA_DIR, for
// e2e tests of the control plane and tenancy; `app()` is valid between beforeAll and afterAll.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbedded, type Embedded } from '@context-guru/embedded';
import { parseEnv } from '@context-guru/gateway';

/** `env` may be a function, read when the process starts (after the enclosing scopes' beforeAll). */
export function useEmbedded(name: string, env: Record<string, string> | (() => Record<string, string>)): () => Embedded {
  let app: Embedded | undefined;
  let dataDir: string | undefined;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), `cg-${name}-`));
    app = await startEmbedded(
      parseEnv({ PORT: '0', ADMIN_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'error', ...(typeof env === 'function' ? env() : env) }),
    );
  });
  afterAll(async () => {
    await app?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return () => {
    if (!app) throw new Error('the embedded process is not started (use it inside a test)');
    return app;
  };
}

/** The admin API of a running embedded process as `token`, and a wait for a generation to be served. */
export function embeddedAdmin(running: () => Embedded, token: string) {
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(running().adminUrl + p, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const applied = async (generation: number) => {
    while ((running().gw.tenancy.sync?.status().generation ?? -1) < generation) await new Promise((r) => setTimeout(r, 10));
  };
  /** Creates a tenant with an active config and a key; returns the key once the gateway serves it. */
  const tenantWithKey = async (id: string, document: unknown): Promise<string | undefined> => {
    expect((await call('POST', '/v1/tenants', { id, name: id })).status).toBe(201);
    expect((await call('POST', `/v1/tenants/${id}/configs`, { document, activate: true })).status).toBe(201);
    const key = id === 'default' ? undefined : ((await call('POST', `/v1/tenants/${id}/keys`, {})).json.key as string);
    await applied((await call('GET', `/v1/tenants/${id}`)).json.generation as number);
    return key;
  };
  return { call, applied, tenantWithKey };
}
