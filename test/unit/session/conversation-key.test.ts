// The turn record is kept per conversation: an explicit session id is narrowed by the alias of the
// conversation (system head + first user text); a derived session already is that alias.
import { conversationKey } from '../../../libs/engine/src/session/conversation-key';
import { decodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { resolveSessionKey } from '../../../libs/engine/src/wire/session-key';

const view = (system: string, first: string, more: unknown[] = []) =>
  decodeRequest(
    'anthropic',
    JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 10, system, messages: [{ role: 'user', content: first }, ...more] }),
  );

describe('conversationKey', () => {
  it('is stable across the turns of one conversation', () => {
    const a = view('You are Claude Code.', 'fix the bug');
    const b = view('You are Claude Code.', 'fix the bug', [
      { role: 'assistant', content: 'Looking.' },
      { role: 'user', content: 'go on' },
    ]);
    expect(conversationKey('t:s1', a)).toBe(conversationKey('t:s1', b));
  });

  it('separates side requests and sub-agents sharing the session id, and keeps sessions apart', () => {
    const main = view('You are Claude Code.', 'fix the bug');
    const probe = view('Summarize the topic in 5 words.', 'fix the bug');
    const sub = view('You are a search sub-agent.', 'find the parser');
    const keys = new Set([
      conversationKey('t:s1', main),
      conversationKey('t:s1', probe),
      conversationKey('t:s1', sub),
      conversationKey('t:s2', main),
    ]);
    expect(keys.size).toBe(4);
    for (const k of keys) expect(k.startsWith('t:s')).toBe(true);
  });

  it('a derived session is its own conversation key', () => {
    const v = view('You are Claude Code.', 'fix the bug');
    const session = resolveSessionKey(v, undefined, 'tenant');
    expect(conversationKey(session, v)).toBe(session);
  });
});
