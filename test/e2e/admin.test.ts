// The admin placeholder on its own port: health is open, everything else needs the bootstrap
// bearer, compared in constant time; with no ADMIN_TOKEN configured the control plane is locked.
import type { AddressInfo } from 'node:net';
import { createAdminServer } from '@context-guru/admin';

async function start(adminToken?: string) {
  const app = await createAdminServer({ adminToken });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

describe('the admin placeholder', () => {
  it('answers health and checks the bearer', async () => {
    const admin = await start('s3cret-admin-token');
    try {
      expect((await fetch(`${admin.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${admin.url}/v1/whoami`)).status).toBe(401);
      expect((await fetch(`${admin.url}/v1/whoami`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      const ok = await fetch(`${admin.url}/v1/whoami`, { headers: { authorization: 'Bearer s3cret-admin-token' } });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ role: 'admin', resources: [] });
    } finally {
      await admin.close();
    }
  });

  it('is locked without ADMIN_TOKEN', async () => {
    const admin = await start(undefined);
    try {
      expect((await fetch(`${admin.url}/v1/whoami`, { headers: { authorization: 'Bearer anything' } })).status).toBe(503);
    } finally {
      await admin.close();
    }
  });
});
