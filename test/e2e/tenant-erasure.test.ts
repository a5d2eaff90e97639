// Erasure through the admin API on the embedded process (issue 29): deleting a session, then the
// tenant, purges its originals, ownership, checkpoints and turn records from the hot store and
// the archive, on the record; ops expand and GET /expand answer 404 afterwards, and no table of
// the archive holds the tenant's plaintext. Before this, DELETE only disabled the tenant and ops
// expand still answered its originals.
import { embeddedAdmin, useEmbedded } from '../support/embedded-harness';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { markerIdOf } from '../support/forwarded-bytes';
import { jsonScript } from '../support/scripted-model';
import { agentSteps, openaiTurn, type AgentStep } from '../support/transcripts';

jest.setTimeout(90_000);

const ADMIN_TOKEN = 'tenant-erasure-admin-token';
const DOCUMENT = { pipeline: ['mask'], components: { mask: { keep_recent: 2 } } };
const withCanary = (steps: AgentStep[], canary: string) =>
  steps.map((s, i) => (i === 0 ? { ...s, output: `${canary}\n${'a line of the log\n'.repeat(50)}` } : s));
const ERASED = withCanary(agentSteps(8, 101), 'ERASE_ME_CANARY=one');
const KEPT = withCanary(agentSteps(8, 102), 'KEEP_ME_CANARY=two');
const TABLES = ['stash_archive', 'ownership', 'session_checkpoint', 'session_state', 'session_turn', 'kept'];

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
});
afterAll(async () => upstream.close());

describe('erasure through the admin API', () => {
  const running = useEmbedded('tenant-erasure', () => ({ ADMIN_TOKEN, OPENAI_UPSTREAM: upstream.url }));
  /** acme's (keyed) marker id of an original. */
  const idOf = (original: string) => markerIdOf(running().gw.keys, original, 'acme');
  let key = '';
  const { call: admin, tenantWithKey } = embeddedAdmin(running, ADMIN_TOKEN);
  const opsExpand = async (id: string) => (await admin('POST', '/v1/ops/expand', { tenant: 'acme', id, reason: 'erasure test' })).status;
  const sql = () => running().gw.durable!.sql;
  /** Rows of `table` whose any text column holds `needle` (the archive's plaintext). */
  const rowsHolding = async (needle: string): Promise<number> => {
    let n = 0;
    for (const table of TABLES) {
      const rows = await sql().query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} t WHERE t::text LIKE $1`, [`%${needle}%`]);
      n += rows[0]!.n;
    }
    return n;
  };
  /** The archived original `id`, when `session` owns it (0 or 1). */
  const archivedOf = async (session: string, id: string): Promise<number> => {
    const rows = await sql().query<{ n: number }>(
      "SELECT count(*)::int AS n FROM stash_archive a JOIN ownership o ON o.tenant = a.tenant AND o.id = a.id WHERE a.tenant = 'acme' AND o.session = $1 AND a.id = $2",
      [`acme:${session}`, id],
    );
    return rows[0]!.n;
  };
  const turn = async (session: string, steps: AgentStep[]) => {
    const res = await fetch(`${running().gatewayUrl}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer sk-x',
        'x-context-guru-key': key,
        'x-context-guru-session': session,
      },
      body: JSON.stringify(openaiTurn(steps, 6)),
    });
    expect(res.status).toBe(200);
    await res.text();
  };
  const expandOver = (id: string, session: string) =>
    fetch(`${running().gatewayUrl}/expand?id=${id}&session=${session}`, { headers: { 'x-context-guru-key': key } });

  beforeAll(async () => {
    key = (await tenantWithKey('acme', DOCUMENT))!;
    await turn('erase-me', ERASED);
    await turn('keep-me', KEPT);
    // Both sessions' originals reached the archive (written behind the hot copy; sealed there).
    await (running().gw.store as unknown as { flush(): Promise<void> }).flush();
    for (const [session, steps] of [
      ['erase-me', ERASED],
      ['keep-me', KEPT],
    ] as const)
      expect(await archivedOf(session, await idOf(steps[0]!.output))).toBe(1);
  });

  it('DELETE /v1/tenants/{id}/sessions/{session} erases that session only, audited', async () => {
    const erasedId = await idOf(ERASED[0]!.output);
    const keptId = await idOf(KEPT[0]!.output);
    expect(await opsExpand(erasedId)).toBe(200);
    const res = await admin('DELETE', '/v1/tenants/acme/sessions/erase-me');
    expect([res.status, res.json]).toEqual([200, { tenant: 'acme', session: 'erase-me', erased: true }]);
    expect(await opsExpand(erasedId)).toBe(404);
    expect((await expandOver(erasedId, 'erase-me')).status).toBe(404);
    expect(await archivedOf('erase-me', erasedId)).toBe(0);
    expect(await rowsHolding('ERASE_ME_CANARY')).toBe(0);
    const left = await sql().query<{ n: number }>(
      "SELECT (SELECT count(*) FROM ownership WHERE session = 'acme:erase-me') + (SELECT count(*) FROM session_turn WHERE session LIKE 'acme:erase-me%') + (SELECT count(*) FROM session_checkpoint WHERE session = 'acme:erase-me') AS n",
    );
    expect(Number(left[0]!.n)).toBe(0);
    // The other session is untouched.
    expect(await opsExpand(keptId)).toBe(200);
    expect((await expandOver(keptId, 'keep-me')).status).toBe(200);
    expect(await archivedOf('keep-me', keptId)).toBe(1);
  });

  it('DELETE /v1/tenants/{id} disables and erases everything the tenant sent, audited', async () => {
    const keptId = await idOf(KEPT[0]!.output);
    const res = await admin('DELETE', '/v1/tenants/acme');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: 'acme', disabled: true, erased: true });
    expect(await opsExpand(keptId)).toBe(404);
    expect(await running().gw.store.getStash('acme', keptId)).toBeNull();
    expect(await rowsHolding('KEEP_ME_CANARY')).toBe(0);
    for (const table of TABLES) {
      const rows = await sql().query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant = 'acme'`);
      expect([table, rows[0]!.n]).toEqual([table, 0]);
    }
    const audit = (await admin('GET', '/v1/audit?tenant=acme&limit=50')).json as unknown as Array<{ action: string; target: string }>;
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['session.erase', 'tenant.erase', 'tenant.disable']));
    expect((await admin('GET', '/v1/audit/verify')).json).toMatchObject({ ok: true });
  });
});
