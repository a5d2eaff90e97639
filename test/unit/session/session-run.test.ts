// A frozen decision made on text a Reformat rewrote (format compacts JSON first) is keyed by the
// rewritten text, which the gateway cannot prefetch from the received body. A turn must still
// replay it: the run records the keys components ask about, the turn's write is guarded by the
// missed ones (commitTurn), the turn re-runs when the store knew them, and the session's later
// turns prefetch them.
import { buildPipeline, contentKey, type Ctx, type Message } from '@context-guru/components';
import { commitTurn, MemoryHotStore } from '@context-guru/storage';
import { firstRun, LearnedKeys, rerun, type SessionRunInput } from '../../../libs/engine/src/session/session-run';

const CONFIG = { pipeline: ['format', 'mask'], components: { mask: { keep_recent: 1, min_tokens: 50 } } };

const issues = (n: number) =>
  JSON.stringify(
    Array.from({ length: n }, (_, i) => ({
      id: 1000 + i,
      title: `Issue ${i}: timeout in auth handler`,
      state: i % 3 ? 'open' : 'closed',
      comments: i * 7,
    })),
    null,
    2,
  );

function transcript(outputs: string[]): Message[] {
  const m: Message[] = [{ role: 'user', content: 'Triage the open issues.' }];
  outputs.forEach((out, i) => {
    m.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, name: 'http_get', arguments: '{}' }] });
    m.push({ role: 'tool', tool_call_id: `call_${i}`, content: out });
  });
  return m;
}

const keysOf = (messages: Message[]) => messages.filter((m) => m.role === 'tool').map((m) => contentKey(m.content as string));

async function turn(store: MemoryHotStore, learned: LearnedKeys, messages: Message[], maxCachedIdx: number) {
  const { pipeline } = buildPipeline(CONFIG);
  const input: SessionRunInput = {
    store,
    persistent: true,
    tenant: 't',
    session: 't:s',
    keys: keysOf(messages),
    learned,
    run: (stash, state) => {
      const ctx: Ctx = {
        tenant: 't',
        session: 't:s',
        provider: 'openai',
        cache: { aware: true, maxCachedIdx, cold: false },
        stash,
        state,
        clock: { now: () => 0 },
        existingBreakpoints: 0,
        window: 0,
      };
      return pipeline.run(messages, ctx);
    },
  };
  // As the request path does: write guarded by the run's unknown keys, re-run on what the store knew.
  for (let run = await firstRun(input); ;) {
    const known = await commitTurn(store, 't', {
      session: 't:s',
      conversation: 't:s',
      stash: run.stash.list(),
      writes: { frozen: run.state.newFrozen, offloaded: run.stash.entries.size > 0 },
      unknown: run.unknown,
      seen: run.snapshot,
    });
    if (!known) return run;
    run = await rerun(input, run, known);
  }
}

describe('a turn over keys a Reformat rewrote', () => {
  it('replays a decision frozen on reformatted text, re-running once, then learns its key', async () => {
    const store = new MemoryHotStore();
    const outputs = [issues(12), issues(14), issues(16)];
    // Turn 1: nothing cached, so mask acts on the older outputs (after format compacted them).
    const first = await turn(store, new LearnedKeys(), transcript(outputs.slice(0, 2)), -1);
    const masked = first.result.messages[2]!.content as string;
    expect(masked).toMatch(/^\[older tool output masked/);
    expect(first.state.newFrozen.size).toBe(1);

    // Turn 2 on a replica that never saw the session: the prefetch misses the compacted key.
    const learned = new LearnedKeys();
    const second = await turn(store, learned, transcript(outputs), 4);
    expect(second.runs).toBe(2);
    expect(second.result.messages[2]!.content).toBe(masked);
    expect(second.state.hits).toBe(1);
    // Message 4 is inside the cached prefix: it stays verbatim (compacted), never newly masked.
    expect(second.result.messages[4]!.content).toBe(JSON.stringify(JSON.parse(outputs[1]!)));

    // Turn 3 on the same replica: the learned key is prefetched, one run suffices.
    const third = await turn(store, learned, transcript(outputs), 4);
    expect(third.runs).toBe(1);
    expect(third.result.messages[2]!.content).toBe(masked);
  });

  it('does not re-run when the missed keys hold nothing', async () => {
    const store = new MemoryHotStore();
    const run = await turn(store, new LearnedKeys(), transcript([issues(12), issues(14)]), -1);
    // format rewrote the JSON, so mask asked about keys the prefetch did not have; none held data.
    expect(run.state.asked.size).toBeGreaterThan(0);
    expect(run.runs).toBe(1);
  });

  it('re-derives a lost decision keyed by reformatted text at depth', async () => {
    let now = 0;
    const store = new MemoryHotStore({ now: () => now, ttlSeconds: 60 });
    const outputs = [issues(12), issues(14), issues(16)];
    const first = await turn(store, new LearnedKeys(), transcript(outputs.slice(0, 2)), -1);
    now += 61_000; // every entry expired: the frozen decision is lost, not just missing
    const again = await turn(store, new LearnedKeys(), transcript(outputs), 4);
    expect(again.snapshot.lost.size).toBe(1);
    expect(again.result.messages[2]!.content).toBe(first.result.messages[2]!.content);
    expect(store.health().frozenRepaired).toBe(1);
  });
});
