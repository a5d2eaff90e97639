import { BufferedStash, SnapshotSessionView, emptySnapshot, stashId, type Message, type SessionSnapshot } from '@context-guru/components';
import { recordForwarded, replayForwarded } from '../../../libs/engine/src/tenancy/forwarded-replay';

const ORIGINAL = 'a long tool output '.repeat(20);
const MASKED = `[masked] <<cg:${stashId(ORIGINAL)}>>`;
const msgs = (): Message[] => [
  { role: 'user', content: 'task' },
  { role: 'tool', tool_call_id: 'a', content: ORIGINAL },
  { role: 'tool', tool_call_id: 'b', content: ORIGINAL },
  { role: 'tool', tool_call_id: 'c', content: 'new output' },
];
const warm = { aware: true, maxCachedIdx: 2, cold: false };
const prev = { n: 3, at: 1, ttlMs: 300_000, rewritten: [1] };

/** Turn k under revision `old` masked message 1 (but not its later copy, message 2). */
function recorded(): SessionSnapshot {
  const view = new SnapshotSessionView();
  const output = msgs();
  output[1]!.content = MASKED;
  recordForwarded(msgs(), output, [1], view, 'old');
  return { ...emptySnapshot(), frozen: view.newFrozen };
}

describe('forwarded replay across a config change', () => {
  it('puts back, on the cached prefix, what another revision forwarded — at its own position only', () => {
    const output = msgs(); // the new revision's pipeline changed nothing
    const stash = new BufferedStash(true);
    expect(replayForwarded(msgs(), output, warm, prev, new SnapshotSessionView(recorded()), stash, 'new')).toBe(1);
    expect(output[1]!.content).toBe(MASKED);
    expect(output[2]!.content).toBe(ORIGINAL);
    // The marker's original is stashed again, so it stays resolvable.
    expect(stash.entries.get(stashId(ORIGINAL))).toBe(ORIGINAL);
  });

  it('leaves the revision that made a record to its own components, and the uncached tail to the new one', () => {
    const same = msgs();
    expect(replayForwarded(msgs(), same, warm, prev, new SnapshotSessionView(recorded()), new BufferedStash(true), 'old')).toBe(0);
    expect(same[1]!.content).toBe(ORIGINAL);
    const tail = msgs();
    const record = recorded();
    expect(
      replayForwarded(msgs(), tail, { ...warm, maxCachedIdx: 0 }, prev, new SnapshotSessionView(record), new BufferedStash(true), 'new'),
    ).toBe(0);
  });

  it('stands aside on a cold or cache-unaware turn and without a previous turn record', () => {
    for (const [cache, p] of [
      [{ ...warm, cold: true }, prev],
      [{ ...warm, aware: false }, prev],
      [warm, null],
    ] as const) {
      const output = msgs();
      expect(replayForwarded(msgs(), output, cache, p, new SnapshotSessionView(recorded()), new BufferedStash(true), 'new')).toBe(0);
    }
  });

  it('keeps the maker of bytes already recorded, and re-records a changed text', () => {
    const view = new SnapshotSessionView(recorded());
    const output = msgs();
    output[1]!.content = MASKED;
    recordForwarded(msgs(), output, [1], view, 'new');
    expect(view.newFrozen.size).toBe(0);
    output[1]!.content = 'other bytes';
    recordForwarded(msgs(), output, [1], view, 'new');
    expect([...view.newFrozen.values()]).toEqual(['new\nother bytes']);
  });
});
