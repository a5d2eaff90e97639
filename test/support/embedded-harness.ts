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
