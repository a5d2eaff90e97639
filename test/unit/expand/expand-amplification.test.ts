// A model that answers with many expand calls must not make the gateway send a continuation many
// times the size of what it was asked. Before, 200 calls for one 124 KB original made a 24.8 MB
// continuation for a small request: every call was answered with the whole original. Now one id
// is expanded once per answer (later calls point at it), at most EXPAND_CALLS_PER_ROUND calls are
// answered per round, and the originals added across an answer's rounds stay within
// EXPAND_BYTES_PER_ANSWER; every call still gets a result, as the providers require.
import { runExpandLoop, type Dialect } from '../../../apps/gateway/src/expand/expand-loop';
import {
  anthropicMessage,
  anthropicRequestRaw,
  openAiCompletion,
  openAiRequestRaw,
  scriptedUpstream,
  stashHooks,
} from '../../support/fake-upstream-json';
import { expandToolUse, jsonReply, openAiExpandSse, openAiTextSse, readBody, sseReply } from '../../support/fake-upstream-sse';

const HASH = '3f2a9c0d1e4b5a6c';
const BIG = `BIG ORIGINAL BEGINS\n${'log line with an error in it\n'.repeat(4300)}`; // ≈ 124 KB
const hashOf = (n: number) => n.toString(16).padStart(16, '0');

const openAiExpand = (ids: string[]): string =>
  JSON.stringify(
    openAiCompletion(
      null,
      ids.map((id, n) => ({ id: `call_${n}`, name: 'context_guru_expand', args: { id } })),
    ),
  );
const anthropicExpand = (ids: string[]): string => JSON.stringify(anthropicMessage(ids.map((id, n) => expandToolUse(id, n))));
const answer = (dialect: Dialect) =>
  JSON.stringify(dialect === 'anthropic' ? anthropicMessage([{ type: 'text', text: 'done' }]) : openAiCompletion('done'));

async function continuation(
  dialect: Dialect,
  ids: string[],
  stash: Record<string, string>,
  limits?: { callsPerRound: number; bytesPerAnswer: number },
) {
  const first = dialect === 'anthropic' ? anthropicExpand(ids) : openAiExpand(ids);
  const upstream = scriptedUpstream([() => jsonReply(answer(dialect))]);
  const hooks = stashHooks(stash);
  const requestRaw = dialect === 'anthropic' ? anthropicRequestRaw(false) : openAiRequestRaw(false);
  const reply = await runExpandLoop({ dialect, requestRaw, advertised: true, first: jsonReply(first), call: upstream.call, hooks, limits });
  await readBody(reply.body);
  const sent = upstream.sent[0] ?? '';
  return { sent, added: sent.length - requestRaw.length - first.length, hooks };
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe.each(['openai', 'anthropic'] as const)('%s: expand calls in one answer', (dialect) => {
  it('200 calls for one id expand it once', async () => {
    const { sent, added, hooks } = await continuation(
      dialect,
      Array.from({ length: 200 }, () => HASH),
      { [HASH]: BIG },
    );
    expect(occurrences(sent, 'BIG ORIGINAL BEGINS')).toBe(1);
    expect(hooks.lookups).toEqual([HASH]);
    expect(hooks.resolved).toEqual([HASH]);
    // The original once, and a short pointer for each of the 199 other calls.
    expect(added).toBeLessThan(BIG.length + 200 * 250);
    // Every call has its result (beside the one tool result the request already carried).
    expect(occurrences(sent, dialect === 'anthropic' ? '"tool_result"' : '"role":"tool"')).toBe(201);
  });

  it('1,000 calls for different ids produce a bounded continuation', async () => {
    const ids = Array.from({ length: 1000 }, (_, n) => hashOf(n));
    const stash = Object.fromEntries(ids.map((id) => [id, `${id}:${'x'.repeat(20_000)}`]));
    const { added, hooks } = await continuation(dialect, ids, stash);
    // 16 calls answered by default, and only those looked up.
    expect(hooks.lookups).toHaveLength(16);
    expect(hooks.resolved).toHaveLength(16);
    expect(added).toBeLessThan(16 * 20_100 + 1000 * 250);
  });

  it('the bytes added across an answer stay within the budget', async () => {
    const ids = Array.from({ length: 10 }, (_, n) => hashOf(n));
    const stash = Object.fromEntries(ids.map((id) => [id, `${id}:${'y'.repeat(20_000)}`]));
    const { sent, added, hooks } = await continuation(dialect, ids, stash, { callsPerRound: 16, bytesPerAnswer: 50_000 });
    expect(hooks.resolved).toEqual(ids.slice(0, 2));
    expect(added).toBeLessThan(50_000 + 10 * 250);
    expect(sent).toContain('[expand: not expanded: the originals expanded for this answer reached the 50000 byte limit]');
  });
});

it('a stream of 1,000 expand calls is answered with a bounded continuation too', async () => {
  const ids = Array.from({ length: 1000 }, (_, n) => hashOf(n));
  const stash = Object.fromEntries(ids.map((id) => [id, `${id}:${'z'.repeat(20_000)}`]));
  const upstream = scriptedUpstream([() => sseReply(openAiTextSse('done'), { chunk: 4096 })]);
  const hooks = stashHooks(stash);
  const first = openAiExpandSse(ids);
  const reply = await runExpandLoop({
    dialect: 'openai',
    requestRaw: openAiRequestRaw(true),
    advertised: true,
    first: sseReply(first, { chunk: 4096 }),
    call: upstream.call,
    hooks,
    maxRounds: 1,
  });
  await readBody(reply.body);
  expect(hooks.resolved).toHaveLength(16);
  expect(upstream.sent[0]!.length).toBeLessThan(openAiRequestRaw(true).length + first.length + 16 * 20_100 + 1000 * 250);
});
