// Guessing at admin credentials: every refused key gets the same answer (before, a revoked key
// was told "this admin key was revoked" and an unknown one "unknown admin key", so a leaked key's
// state could be probed); an address that keeps failing is throttled (before, nothing bounded the
// attempts); and a configured ADMIN_TOKEN must be strong (before, any non-empty value was taken).
import { parseAdminEnv } from '@context-guru/admin';
import { EnvError } from '@context-guru/engine';
import { parseEnv } from '@context-guru/gateway';
import { ADMIN_TOKEN, startAdmin, type AdminHarness } from '../../support/admin-harness';

jest.setTimeout(60_000);

describe('admin credentials', () => {
  let h: AdminHarness;
  beforeAll(async () => {
    h = await startAdmin({ authFailuresPerMinute: 4 });
  });
  afterAll(() => h.close());

  it('answers a revoked key, an unknown key and a wrong token alike, and throttles the address after the failures', async () => {
    const made = await h.call('POST', '/v1/admin-keys', { body: { role: 'viewer', label: 'leaked' } });
    expect((await h.call('DELETE', `/v1/admin-keys/${made.json.id}`)).status).toBe(200);
    const revoked = await h.call('GET', '/v1/tenants', { token: made.json.key });
    const unknown = await h.call('GET', '/v1/tenants', { token: 'cg_adm_' + 'Q'.repeat(32) });
    const wrong = await h.call('GET', '/v1/tenants', { token: 'not-the-bootstrap-token-at-all' });
    expect(revoked).toEqual({ status: 401, json: { error: { code: 'unauthorized', message: 'invalid admin credential' } } });
    expect(unknown).toEqual(revoked);
    expect(wrong).toEqual(revoked);
    // The fourth failure in a minute is the last one heard; then even the right token waits.
    expect((await h.call('GET', '/v1/tenants', { token: 'another-wrong-token-value-123' })).status).toBe(401);
    const throttled = await h.call('GET', '/v1/tenants', { token: ADMIN_TOKEN });
    expect(throttled).toEqual({
      status: 429,
      json: { error: { code: 'auth_throttled', message: expect.stringMatching(/retry in \d+ s/) } },
    });
    // Health stays open.
    expect((await h.call('GET', '/healthz', { token: null })).status).toBe(200);
  });

  it('refuses a weak ADMIN_TOKEN at boot, in the gateway (embedded) and the standalone admin alike', () => {
    const problems = (parse: () => unknown) => {
      try {
        parse();
      } catch (err) {
        if (err instanceof EnvError) return err.problems.map((p) => [p.code, p.variable]);
        throw err;
      }
      return [];
    };
    for (const parse of [parseEnv, parseAdminEnv] as Array<(src: Record<string, string>) => unknown>) {
      expect(problems(() => parse({ ADMIN_TOKEN: 'admin' }))).toEqual([['weak_secret', 'ADMIN_TOKEN']]);
      // Long but hardly random: too few different characters.
      expect(problems(() => parse({ ADMIN_TOKEN: 'a'.repeat(40) }))).toEqual([['weak_secret', 'ADMIN_TOKEN']]);
      expect(problems(() => parse({ ADMIN_TOKEN: 'f3a9c0d1e4b5a6c7f3a9c0d1' }))).toEqual([]);
      // The minimum is the operator's to raise.
      expect(problems(() => parse({ ADMIN_TOKEN: 'f3a9c0d1e4b5a6c7f3a9c0d1', ADMIN_TOKEN_MIN_LENGTH: '32' }))).toEqual([
        ['weak_secret', 'ADMIN_TOKEN'],
      ]);
    }
  });
});
