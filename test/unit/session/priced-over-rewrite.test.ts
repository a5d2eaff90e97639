// A priced proposal at depth over a message a later component rewrote. In `agent` mask runs before
// extract, so on the turn after extract projected a large output mask finds the client's text
// while the provider holds extract's projection: its stub must be priced against the projection
// and, when the cut pays, replace it — the marker still naming the one original.
import { markerIds } from '@context-guru/components';
import { MemoryHotStore } from '@context-guru/storage';
import { realCorpus, realRequest } from '../../../bench/real-corpus';
import { createLogger } from '../../../libs/engine/src/logger';
import { createPriceTable } from '../../../libs/engine/src/report/price-table';
import { prepareRequest } from '../../../libs/engine/src/prepare-request';
import { createTenantRuntime, loadConfigDocument } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { SIMULATED_PRICES } from '../../support/prompt-cache';

type Json = Record<string, unknown>;
const session = realCorpus().find((s) => s.id === 'real-openhands-llama4-ponyc-4595');

/** tool_use_id → the text of its tool_result, in an Anthropic body. */
function toolResults(body: Json): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of body.messages as Json[]) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Json[]) {
      if (b.type !== 'tool_result') continue;
      const c = b.content;
      const text = typeof c === 'string' ? c : (c as Json[]).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
      out.set(b.tool_use_id as string, text);
    }
  }
  return out;
}

describe('a priced mask over extract’s projection (preset agent, Anthropic)', () => {
  it('replaces the projection with the stub on a planned turn, the marker resolving to the original', async () => {
    if (!session) throw new Error('real-openhands-llama4-ponyc-4595 is missing from bench/corpus-real');
    let now = 1_700_000_000_000;
    const store = new MemoryHotStore({ now: () => now });
    const tenant = createTenantRuntime('t', loadConfigDocument('agent', undefined), 1);
    const deps = {
      store,
      clock: { now: () => now },
      log: createLogger('error', () => undefined),
      injectMode: 'auto' as const,
      rewrites: { paybackTurns: 2, prices: createPriceTable([SIMULATED_PRICES]) },
    };
    let prev = new Map<string, string>();
    const overProjection: string[] = [];
    for (let t = 1; t <= session.stats.requests; t++) {
      now += 30_000;
      const body = realRequest(session, 'anthropic', t);
      const p = await prepareRequest(deps, {
        route: 'anthropic',
        dialect: 'anthropic',
        raw: JSON.stringify(body),
        tenant,
        pipeline: tenant.built.pipeline,
        cacheMode: 'auto',
        sessionHeader: 'over-projection',
        bypassHeader: false,
      });
      const sent = toolResults(JSON.parse(p.outgoing) as Json);
      const client = toolResults(body);
      for (const [id, text] of sent) {
        const before = prev.get(id);
        if (!before || before === text || !text.startsWith('[older tool output masked')) continue;
        // The previous turn forwarded extract's projection, not the client's text.
        expect(before).not.toBe(client.get(id));
        expect(p.report.planned).toBeDefined();
        const [marker] = markerIds(text);
        expect(markerIds(before)).toContain(marker);
        expect(await store.getStash('t', marker!)).toBe(client.get(id));
        overProjection.push(id);
      }
      prev = sent;
    }
    await store.close();
    expect(overProjection.length).toBeGreaterThan(0);
  });
});
