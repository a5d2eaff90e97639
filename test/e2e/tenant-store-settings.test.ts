// A tenant version's `store` block is applied to that tenant (issue 29): a tenant that asked for
// nothing to be kept (`store: {enabled: false}`) gets no marker, no expand tool and nothing stashed
// in the hot store or the archive, while a tenant beside it on the same process keeps its markers.
import { embeddedAdmin, useEmbedded } from '../support/embedded-harness';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { markerIdOf } from '../support/forwarded-bytes';
import { jsonScript } from '../support/scripted-model';
import { agentSteps, openaiTurn } from '../support/transcripts';

jest.setTimeout(60_000);

const ADMIN_TOKEN = 'tenant-store-settings-admin';
const PIPELINE = { pipeline: ['mask'], components: { mask: { keep_recent: 2 } } };
const steps = agentSteps(8, 81);

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
});
afterAll(async () => upstream.close());

describe('tenant store settings', () => {
  const running = useEmbedded('tenant-store', () => ({ ADMIN_TOKEN, OPENAI_UPSTREAM: upstream.url }));
  const keys: Record<string, string> = {};
  const admin = embeddedAdmin(running, ADMIN_TOKEN);
  /** One six-output turn of `tenant`; returns what was forwarded upstream. */
  const forwarded = async (tenant: string): Promise<string> => {
    const res = await fetch(`${running().gatewayUrl}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer sk-x',
        'x-context-guru-key': keys[tenant]!,
        'x-context-guru-session': `${tenant}-1`,
      },
      body: JSON.stringify(openaiTurn(steps, 6)),
    });
    expect(res.status).toBe(200);
    await res.text();
    return upstream.requests[upstream.requests.length - 1]!.raw;
  };

  beforeAll(async () => {
    for (const [id, store] of [
      ['keeps', { enabled: true }],
      ['quiet', { enabled: false }],
    ] as const)
      keys[id] = (await admin.tenantWithKey(id, { ...PIPELINE, store }))!;
  });

  it('a store-enabled tenant gets markers and its originals are kept', async () => {
    const sent = await forwarded('keeps');
    expect(sent).toMatch(/<<cg:[A-Za-z0-9_-]{16}>>/);
    expect(sent).toContain('context_guru_expand');
    expect(await running().gw.store.getStash('keeps', await markerIdOf(running().gw.keys, steps[0]!.output, 'keeps'))).toBe(
      steps[0]!.output,
    );
  });

  it('a store-disabled tenant gets no marker, no expand tool, and nothing is stashed', async () => {
    const sent = await forwarded('quiet');
    expect(sent).not.toContain('<<cg:');
    expect(sent).not.toContain('context_guru_expand');
    for (const s of steps.slice(0, 6))
      expect(await running().gw.store.getStash('quiet', await markerIdOf(running().gw.keys, s.output, 'quiet'))).toBeNull();
    // The archive (PGlite here) holds no original of the tenant either.
    const rows = await running().gw.durable!.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM stash_archive WHERE tenant = $1', [
      'quiet',
    ]);
    expect(rows[0]!.n).toBe(0);
  });
});
