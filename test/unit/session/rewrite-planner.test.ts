import { cloneMessage, type Dialect, type Message } from '@context-guru/components';
import { planRewrite, rebillStart, remainingTurns, type PlanInput } from '../../../libs/engine/src/session/rewrite-planner';

const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
const MARKER = '[older tool output masked] <<cg:0123456789abcdef>>';

/** user task, then `turns` × (assistant call, tool output of `sizes[k]` words). */
function session(sizes: number[]): Message[] {
  const out: Message[] = [{ role: 'user', content: 'fix the failing test' }];
  sizes.forEach((n, k) => {
    out.push({ role: 'assistant', content: `step ${k}`, tool_calls: [{ id: `c${k}`, name: 'bash', arguments: '{"cmd":"pytest"}' }] });
    out.push({ role: 'tool', tool_call_id: `c${k}`, content: words(n, `o${k}_`) });
  });
  return out;
}

/** The pipeline's output with a proposal at each index (the message masked). */
function proposing(input: Message[], at: number[]): { output: Message[]; proposals: Map<number, Message> } {
  const output = input.map(cloneMessage);
  const proposals = new Map<number, Message>();
  for (const i of at) {
    proposals.set(i, cloneMessage(input[i] as Message));
    output[i] = { ...(input[i] as Message), content: MARKER };
  }
  return { output, proposals };
}

function plan(dialect: Dialect, input: Message[], at: number[], cachedIdx: number, paybackTurns = 2) {
  const { output, proposals } = proposing(input, at);
  const p: PlanInput = {
    dialect,
    input,
    output,
    proposals,
    cachedIdx,
    rates: dialect === 'anthropic' ? { write: 1.25, read: 0.1 } : { write: 1, read: 0.1 },
    policy: { paybackTurns },
    anchored: true,
  };
  return { ...planRewrite(p), output };
}

describe('the rewrite planner', () => {
  // 10 small turns, then a 3000-word output the model has answered (at index 22), then its answer.
  const big = session([...Array<number>(10).fill(20), 3000, 20]);
  const bigAt = 22;
  const cached = big.length - 2; // the last tool output is the new tail

  it.each(['anthropic', 'openai'] as const)('%s: offloads a large output read once, with a short suffix: it pays at once', (dialect) => {
    const r = plan(dialect, big, [bigAt], cached);
    expect(r.reverted).toEqual([]);
    expect(r.plan).toMatchObject({ from: bigAt });
    expect(r.plan!.paybackTurns).toBeLessThan(1);
    expect(r.plan!.savingPerTurn).toBeGreaterThan(0);
    expect(r.output[bigAt]!.content).toBe(MARKER);
  });

  it('declines a rewrite deep in a long prefix and puts the message back as the provider holds it', () => {
    // The small output at index 2 is followed by 3000 words: the suffix re-billed outweighs it.
    const r = plan('anthropic', big, [2], cached);
    expect(r.plan).toBeNull();
    expect(r.reverted).toEqual([2]);
    expect(r.output[2]).toEqual(big[2]);
  });

  it('batches: one cut covers every proposal after it, and reverts only those before it', () => {
    const input = session([...Array<number>(10).fill(20), 3000, 2500, 20]);
    const r = plan('openai', input, [2, 22, 24], input.length - 2);
    expect(r.plan).toMatchObject({ from: 22 });
    expect(r.reverted).toEqual([2]);
    expect(r.output[22]!.content).toBe(MARKER);
    expect(r.output[24]!.content).toBe(MARKER);
    expect(r.output[2]).toEqual(input[2]);
  });

  it('never cuts with a payback window of 0, nor before the session has shown it goes on', () => {
    expect(plan('openai', big, [bigAt], cached, 0)).toMatchObject({ plan: null, reverted: [bigAt] });
    // One answer so far: no later turn can be counted on, so a cut that costs anything is refused
    // (the same cut pays within the window once the session has shown it goes on).
    const early: Message[] = [...session([1000]), { role: 'user', content: words(400, 'u') }];
    expect(remainingTurns(early)).toBe(0);
    expect(plan('openai', early, [2], 3)).toMatchObject({ plan: null, reverted: [2] });
    const later: Message[] = [...session([20, 20, 20, 1000]), { role: 'user', content: words(400, 'u') }];
    const r = plan('openai', later, [8], 9);
    expect(r.plan!.costTokens).toBeGreaterThan(0);
    expect(r.plan!.paybackTurns).toBeLessThanOrEqual(2);
  });

  it('prices an Anthropic change from the entry cacheinject anchors on the last assistant message', () => {
    // cachedIdx 22: the last assistant message at or before it is 21.
    expect(rebillStart('anthropic', big, 22, 22, true)).toBe(22);
    expect(rebillStart('anthropic', big, 22, 22, false)).toBe(21);
    // Deeper than that anchor: no entry the gateway can vouch for, the whole message list re-bills.
    expect(rebillStart('anthropic', big, 20, 22, true)).toBe(0);
    expect(rebillStart('openai', big, 20, 22, true)).toBe(20);
  });
});
