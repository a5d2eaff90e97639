// Ops expand (tenant-scoped, reason required, rate-limited, audited) and the audit chain's verify
// catching an edited and a deleted row, on the real Redis + Postgres.
import { Redis } from 'ioredis';
import { startAdmin, type AdminHarness } from '../../support/admin-harness';
import { REDIS_URL, flushPrefix } from '../storage/redis-support';

jest.setTimeout(60_000);

const ID_A = 'aaaaaaaaaaaaaaaa';
const ID_B = 'bbbbbbbbbbbbbbbb';

describe('ops expand and the audit chain', () => {
  let h: AdminHarness;
  let operator: string;

  beforeAll(async () => {
    h = await startAdmin({ opsExpandPerMinute: 6 });
    for (const id of ['acme', 'beta']) await h.call('POST', '/v1/tenants', { body: { id, name: id } });
    operator = (await h.call('POST', '/v1/admin-keys', { body: { role: 'operator', label: 'oncall' } })).json;
    await h.store.putStash('acme', 'acme:s1', [{ id: ID_A, text: 'original of acme ✓' }]);
    await h.store.putStash('beta', 'beta:s1', [{ id: ID_B, text: 'original of beta' }]);
    await h.store.queue.flush();
  });
  afterAll(() => h.close());

  const expand = (body: unknown, token?: string) => h.call('POST', '/v1/ops/expand', { token: token ?? (operator as any).key, body });

  it("returns the tenant's own original by hash or marker, and never another tenant's", async () => {
    expect((await expand({ tenant: 'acme', id: ID_A, reason: 'ticket 1' })).json).toEqual({ id: ID_A, original: 'original of acme ✓' });
    expect((await expand({ tenant: 'acme', id: `<<cg:${ID_A}>>`, reason: 'ticket 1' })).json.id).toBe(ID_A);
    const cross = await expand({ tenant: 'acme', id: ID_B, reason: 'ticket 1' });
    expect(cross).toEqual({ status: 404, json: { error: { code: 'not_found', message: `original ${ID_B} for tenant "acme" not found` } } });
    expect((await expand({ tenant: 'beta', id: ID_A, reason: 'ticket 1' })).status).toBe(404);
    expect((await expand({ tenant: 'nobody', id: ID_A, reason: 'ticket 1' })).status).toBe(404);
  });

  it('needs a reason and is audited with actor, tenant, hash and reason', async () => {
    expect((await expand({ tenant: 'acme', id: ID_A })).json.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/reason/),
    });
    expect((await expand({ tenant: 'acme', id: ID_A, reason: '   ' })).json.error.code).toBe('invalid_request');
    const rows = (await h.call('GET', '/v1/audit?action=ops.expand')).json;
    expect(rows).toHaveLength(2); // the two that answered an original
    expect(rows[0]).toMatchObject({
      actor: `key:${(operator as any).id}`,
      tenant: 'acme',
      target: ID_A,
      reason: 'ticket 1',
      action: 'ops.expand',
    });
  });

  it('still finds an original after Redis lost it (the durable archive), then rate-limits the actor', async () => {
    const admin = new Redis(REDIS_URL);
    await flushPrefix(admin, h.prefix);
    admin.disconnect();
    // 5 attempts so far for this actor (schema-rejected bodies do not count); the limit is 6 per minute.
    expect((await expand({ tenant: 'acme', id: ID_A, reason: 'after redis loss' })).json.original).toBe('original of acme ✓');
    const limited = await expand({ tenant: 'acme', id: ID_A, reason: 'one too many' });
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    // Another actor has its own budget.
    expect((await expand({ tenant: 'acme', id: ID_A, reason: 'bootstrap look' }, 'test-bootstrap-token-0123456789')).status).toBe(200);
  });

  it('verify passes on the untouched chain and names the first bad row after an edit or a delete in SQL', async () => {
    const ok = (await h.call('GET', '/v1/audit/verify')).json;
    expect(ok.ok).toBe(true);
    expect(ok.checked).toBeGreaterThanOrEqual(7);
    const ids = ((await h.call('GET', '/v1/audit?limit=1000')).json as Array<{ id: number }>).map((r) => r.id).reverse();
    const edited = ids[2]!;
    await expect(h.sql.query(`UPDATE audit_log SET reason = 'x' WHERE id = $1`, [edited])).rejects.toThrow(/history is immutable/);
    // A tamperer with DDL rights drops the guard first: the chain still catches the edit.
    await h.sql.exec('ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only');
    await h.sql.query(`UPDATE audit_log SET reason = 'nothing to see' WHERE id = $1`, [edited]);
    expect((await h.call('GET', '/v1/audit/verify')).json).toEqual({ ok: false, checked: 3, first_bad_id: edited });
    // Restoring the row's content restores the chain: the check is over content, not a flag.
    await h.sql.query('UPDATE audit_log SET reason = NULL WHERE id = $1', [edited]);
    expect((await h.call('GET', '/v1/audit/verify')).json.ok).toBe(true);
    const deleted = ids[4]!;
    await h.sql.query('DELETE FROM audit_log WHERE id = $1', [deleted]);
    expect((await h.call('GET', '/v1/audit/verify')).json).toEqual({ ok: false, checked: 5, first_bad_id: ids[5] });
  });
});
