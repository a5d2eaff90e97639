// The repeated-turn memo keeps a session's last two turns, not every turn it ever sent: a growing
// session's earlier bodies never come back, and each entry holds that turn's whole decoded view,
// which the character budget does not count. Before, entries were keyed by session and body size,
// so every turn of every session stayed until the budget (16 M characters, 2,048 entries) pushed
// it out — hundreds of decoded views across many sessions.
import { RepeatMemo } from '../../../libs/engine/src/prepare/repeat-memo';
import type { PrepareInput } from '../../../libs/engine/src/prepare/prepare.types';
import { createTenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import type { RepeatEntry } from '../../../libs/engine/src/prepare/prepare.types';

const tenant = createTenantRuntime('memo', { preset: 'agent' }, 1);

/** Turn t of `session`: a body that grows by one message each turn, as an agent's does. */
function turn(session: string, t: number): PrepareInput {
  const raw = JSON.stringify({ model: 'm', messages: Array.from({ length: t }, (_, i) => ({ role: 'user', content: `step ${i}` })) });
  return {
    route: 'openai',
    dialect: 'openai',
    raw,
    bytes: Buffer.from(raw),
    tenant,
    pipeline: tenant.built.pipeline,
    cacheMode: 'auto',
    sessionHeader: session,
    bypassHeader: false,
  };
}

/** The fields the memo itself reads; the rest of a remembered run does not matter to it. */
const entryFor = (input: PrepareInput) =>
  ({
    raw: input.raw,
    bytes: input.bytes,
    tenant,
    pipeline: input.pipeline,
    cacheMode: input.cacheMode,
    outgoing: input.raw,
  }) as unknown as RepeatEntry;

it('keeps the last two turns of a growing session and forgets the earlier ones', () => {
  const memo = new RepeatMemo();
  for (let t = 1; t <= 10; t++) memo.remember(turn('s1', t), entryFor(turn('s1', t)));
  expect(memo.find(turn('s1', 10))?.raw).toBe(turn('s1', 10).raw);
  expect(memo.find(turn('s1', 9))?.raw).toBe(turn('s1', 9).raw);
  for (let t = 1; t <= 8; t++) expect(memo.find(turn('s1', t))).toBeUndefined();
  const again = turn('s1', 9);
  expect(memo.textOf(again, again.bytes ?? Buffer.alloc(0))).toBe(again.raw);
});

it('keeps each session its own last turns', () => {
  const memo = new RepeatMemo();
  for (let t = 1; t <= 5; t++) for (const s of ['a', 'b', 'c']) memo.remember(turn(s, t), entryFor(turn(s, t)));
  for (const s of ['a', 'b', 'c']) {
    expect(memo.find(turn(s, 5))).toBeDefined();
    expect(memo.find(turn(s, 4))).toBeDefined();
    expect(memo.find(turn(s, 3))).toBeUndefined();
  }
  // A forgotten entry leaves room for the session's next turns, which are kept as before.
  memo.forget(turn('a', 5));
  memo.remember(turn('a', 6), entryFor(turn('a', 6)));
  expect(memo.find(turn('a', 6))).toBeDefined();
  expect(memo.find(turn('a', 4))).toBeDefined();
  expect(memo.find(turn('a', 5))).toBeUndefined();
});
