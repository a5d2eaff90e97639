// The sessions bench replays what agents send: every session's turns in order, each body the
// previous one plus what is new, or a re-send (the messages already sent come back unchanged,
// except the breakpoint an Anthropic client moves to the newest block).
import { sessionCorpus } from '../../../bench/session-corpus';
import { realCorpus } from '../../../bench/real-corpus';

type Body = { messages: Array<Record<string, unknown>> };

/** A message without its content blocks' cache_control (the breakpoint a client moves). */
const unmarked = (m: Record<string, unknown>): string => JSON.stringify(m, (k, v: unknown) => (k === 'cache_control' ? undefined : v));

it('replays every real session in both dialects beside the generated ones', () => {
  const names = sessionCorpus().map((s) => s.name);
  for (const r of realCorpus()) {
    expect(names).toContain(`${r.id} (openai)`);
    expect(names).toContain(`${r.id} (anthropic)`);
  }
  expect(names.filter((n) => !n.startsWith('real-')).length).toBeGreaterThanOrEqual(16);
});

it('sends each turn as the previous body plus new messages (or the same again)', () => {
  for (const s of sessionCorpus()) {
    let prev: Body | undefined;
    for (const raw of s.bodies) {
      const body = JSON.parse(raw) as Body;
      if (prev) {
        expect(body.messages.length).toBeGreaterThanOrEqual(prev.messages.length);
        prev.messages.forEach((m, i) => expect(unmarked(body.messages[i] ?? {})).toBe(unmarked(m)));
      }
      prev = body;
    }
  }
});
