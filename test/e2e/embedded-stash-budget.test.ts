// The laptop default (`npm start`: in-process hot store, PGlite archive, no Redis) bounds each
// tenant's archived originals by STORE_MAX_MB_PER_TENANT (docs/security.md, abuse bounds): the
// in-process store evicts past it, and the archive, which would otherwise keep every original for
// 30 days, refuses a turn whose new originals do not fit — those outputs go out as received, the
// refusal is counted in /stats, and every marker that was forwarded resolves.
import type { TieredHotStore } from '@context-guru/storage';
import { useEmbedded } from '../support/embedded-harness';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { markerIds } from '../support/forwarded-bytes';
import { jsonScript } from '../support/scripted-model';
import { openaiTurn, type AgentStep } from '../support/transcripts';

jest.setTimeout(60_000);

const MIB = 1024 * 1024;
/** Six distinct outputs of ~100 KB per session: all six archived take ~0.8 MiB sealed. */
const stepsOf = (session: string): AgentStep[] =>
  Array.from({ length: 6 }, (_, i) => ({
    id: `call_${session}_${i}`,
    tool: 'bash' as const,
    args: { cmd: `cat log-${i}.txt` },
    output: Array.from({ length: 1500 }, (_, j) => `${session} step ${i} line ${j}: ${'lorem ipsum dolor '.repeat(3)}`).join('\n'),
  }));

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
});
afterAll(async () => upstream.close());

describe('the embedded default bounds the archive per tenant', () => {
  const running = useEmbedded('stash-budget', () => ({ OPENAI_UPSTREAM: upstream.url, PRESET: 'agent', STORE_MAX_MB_PER_TENANT: '1' }));
  const send = async (session: string): Promise<string> => {
    const res = await fetch(`${running().gatewayUrl}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x', 'x-context-guru-session': session },
      body: JSON.stringify(openaiTurn(stepsOf(session), 6)),
    });
    expect(res.status).toBe(200);
    await res.text();
    return upstream.requests[upstream.requests.length - 1]!.raw;
  };

  it('a tenant past its budget gets its outputs verbatim, counted, and every forwarded marker resolves', async () => {
    const store = running().gw.store as TieredHotStore;
    const first = await send('alpha');
    expect(markerIds(first).size).toBeGreaterThan(0);
    await store.flush();
    const second = await send('beta');
    const stats = (await (await fetch(`${running().gatewayUrl}/stats`)).json()) as Record<string, unknown>;
    expect(stats.stash_refused).toBe(1);
    // beta's outputs went out as the client sent them: no marker names one of them.
    expect(markerIds(second).size).toBe(0);
    expect(second).toContain('beta step 0 line 1499');
    await store.flush();
    const [row] = await store.durable.sql.query(
      "SELECT COALESCE(sum(octet_length(text)), 0)::bigint AS n FROM stash_archive WHERE tenant = 'default'",
    );
    expect(Number(row!.n)).toBeLessThanOrEqual(MIB);
    expect(Number(row!.n)).toBeGreaterThan(0);
    for (const id of markerIds(first)) expect(await store.durable.getArchivedStash('default', id)).not.toBeNull();
  });
});
