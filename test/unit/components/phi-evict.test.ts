import { Pipeline, contentKey, countTokens, frozenSlot, stashId, type Message } from '@context-guru/components';
import { WEIGHTS, evictedText, phiEvictComponent, scoreOutputs } from '../../../libs/components/src/offload/phi-evict.component';
import { keywords } from '../../../libs/components/src/shared/keywords';
import { toolOutputs } from '../../../libs/components/src/shared/message-text';
import { testCtx } from '../../support/ctx';

const make = (raw?: unknown) => phiEvictComponent.create(phiEvictComponent.options(raw, 'components.phi_evict'));
const tool = (id: string, content: string): Message => ({ role: 'tool', tool_call_id: id, content });

// Old, large and on-topic: the export job's log.
const EXPORT_LOG = Array.from(
  { length: 120 },
  (_, i) =>
    `2025-03-14T00:00:${String(i % 60).padStart(2, '0')}Z reconciliation export: batch ${i} wrote ${200 + i} entries at midnight UTC cutoff`,
).join('\n');
// Smaller and off-topic: a dependency listing.
const DEPS = Array.from({ length: 12 }, (_, i) => `pydantic-core==2.${i}.0  # via pydantic`).join('\n');
const NEWEST = Array.from({ length: 12 }, (_, i) => `tests/test_export.py::test_cutoff_${i} PASSED`).join('\n');

function transcript(): Message[] {
  return [
    { role: 'user', content: 'Why does the reconciliation export drop entries posted at midnight?' },
    tool('a', EXPORT_LOG),
    tool('b', DEPS),
    { role: 'user', content: 'Look at the reconciliation export cutoff at midnight again.' },
    tool('c', NEWEST),
  ];
}

async function evictedWith(weights: string, budget: number): Promise<string[]> {
  const result = await new Pipeline([make({ weights, budget_tokens: budget })]).run(transcript(), testCtx());
  return result.messages.filter((m) => m.role === 'tool' && String(m.content).startsWith('[evicted')).map((m) => m.tool_call_id!);
}

describe('phi_evict', () => {
  it('scores with the seed formula: relevance and recency raise Φ, cost and redundancy lower it', () => {
    const messages = [tool('a', 'alpha beta'), tool('b', 'gamma'), tool('c', 'alpha beta'), tool('d', 'delta')];
    const scored = scoreOutputs(toolOutputs(messages), keywords('alpha gamma'), WEIGHTS.balanced);
    const total = scored.reduce((a, s) => a + s.tokens, 0);
    const expected = (relevance: number, k: number, tokens: number, redundancy: number) =>
      0.4 * relevance + 0.2 * (k / 3) - 0.3 * (tokens / total) - 0.1 * redundancy;
    expect(scored[0]!.phi).toBeCloseTo(expected(0.5, 0, scored[0]!.tokens, 0));
    expect(scored[2]!.phi).toBeCloseTo(expected(0.5, 2, scored[2]!.tokens, 1));
  });

  it('lets the weight profile decide between a big relevant output and a small irrelevant one', async () => {
    // Evicting either older output is enough; which one goes is the profile's call.
    const budget = countTokens(EXPORT_LOG) + countTokens(DEPS) + countTokens(NEWEST) - 60;
    expect(await evictedWith('conservative', budget)).toEqual(['b']);
    expect(await evictedWith('balanced', budget)).toEqual(['b']);
    expect(await evictedWith('aggressive', budget)).toEqual(['a']);
  });

  it('never evicts the newest tool output, even when it alone breaks the budget', async () => {
    const messages = [tool('a', 'ok'), tool('b', EXPORT_LOG)];
    const result = await new Pipeline([make({ budget_tokens: 10 })]).run(messages, testCtx());
    expect(result.messages[1]!.content).toBe(EXPORT_LOG);
    expect(result.reports[0]!.gates).toEqual({ marker_no_win: 1 });
  });

  it('replays a frozen eviction and repairs a lost one at depth, even when within budget', async () => {
    const frozenText = evictedText(`<<cg:${stashId(EXPORT_LOG)}>> [full output: call context_guru_expand]`);
    const frozen = new Map([[frozenSlot('phi_evict', contentKey(EXPORT_LOG)), frozenText]]);
    const lost = new Set([frozenSlot('phi_evict', contentKey(DEPS))]);
    const ctx = testCtx({ cache: { aware: true, maxCachedIdx: 3, cold: false }, snapshot: { frozen, lost } });
    const result = await new Pipeline([make()]).run(transcript(), ctx);
    expect(result.messages[1]!.content).toBe(frozenText);
    expect(result.messages[2]!.content).toBe(evictedText(`<<cg:${stashId(DEPS)}>> [full output: call context_guru_expand]`));
    expect([...ctx.stash.entries.keys()].sort()).toEqual([stashId(EXPORT_LOG), stashId(DEPS)].sort());
  });

  it('tail-gates new evictions on a warm cache and acts at depth on a cold one only with cold_cache', async () => {
    const budget = 50;
    const cold = { aware: true, maxCachedIdx: 3, cold: true };
    const warm = await new Pipeline([make({ budget_tokens: budget })]).run(transcript(), testCtx({ cache: { ...cold, cold: false } }));
    expect(warm.reports[0]!.gates).toEqual({ cached_prefix: 2 });
    const coldOff = await new Pipeline([make({ budget_tokens: budget })]).run(transcript(), testCtx({ cache: cold }));
    expect(coldOff.reports[0]!.gates).toEqual({ cached_prefix: 2 });
    const coldOn = await new Pipeline([make({ budget_tokens: budget, cold_cache: true })]).run(transcript(), testCtx({ cache: cold }));
    expect(coldOn.reports[0]!.keys).toHaveLength(2);
  });

  it('rejects an unknown weights profile naming the key', () => {
    expect(() => make({ weights: 'greedy' })).toThrow('components.phi_evict.weights');
  });
});
