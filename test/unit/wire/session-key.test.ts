// A session key is tenant-scoped; an explicit id always names its session — kept when path-safe,
// hashed when not (the same function GET /expand uses), never replaced by the content hash.
import { createHash } from 'node:crypto';
import { decodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { sessionIdBase } from '@context-guru/components';
import { namedSessionBase, resolveSessionKey } from '../../../libs/engine/src/wire/session-key';
import { ANTHROPIC_HOSTILE } from './bodies.fixture';

const hash16 = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

function anth(metadata: unknown): ReturnType<typeof decodeRequest> {
  return decodeRequest(
    'anthropic',
    JSON.stringify({ system: 'You are Claude Code.', metadata, messages: [{ role: 'user', content: 'fix the bug' }] }),
  );
}

describe('resolveSessionKey', () => {
  it('prefers the header, trimmed, scoped by tenant', () => {
    expect(resolveSessionKey(anth({ user_id: 'other' }), '  run-42:a.b_c-d ', 't1')).toBe('t1:run-42:a.b_c-d');
  });

  it('reads session_id from Claude Code metadata.user_id JSON', () => {
    const view = decodeRequest('anthropic', ANTHROPIC_HOSTILE);
    expect(resolveSessionKey(view, undefined, 'acme')).toBe('acme:7d1c2f0e-5b7a-4c1e-9c3d-2f6a8b9e0c11');
  });

  it('uses a plain metadata.user_id, then metadata.taskId', () => {
    expect(resolveSessionKey(anth({ user_id: 'user_abc_account_1_session_2' }), undefined, 't')).toBe('t:user_abc_account_1_session_2');
    expect(resolveSessionKey(anth({ taskId: 'task-7' }), undefined, 't')).toBe('t:task-7');
  });

  it('hashes an explicit id that is not path-safe instead of dropping it', () => {
    const derived = `t:${hash16('You are Claude Code.\x00fix the bug')}`;
    const hashed = (id: string) => `t:h-${createHash('sha256').update(id.trim()).digest('hex').slice(0, 32)}`;
    expect(resolveSessionKey(anth({ user_id: 'safe-id' }), '../../etc', 't')).toBe(hashed('../../etc'));
    for (const bad of ['../../etc', '...', '.', 'a b', 'x'.repeat(129), 'é', 'proj/feature-1', 'セッション', '{not json']) {
      expect([bad, resolveSessionKey(anth({ user_id: 'other' }), bad, 't')]).toEqual([bad, hashed(bad)]);
      expect([bad, resolveSessionKey(anth({ user_id: bad }), undefined, 't')]).toEqual([bad, hashed(bad)]);
    }
    expect(resolveSessionKey(anth({ user_id: '{"session_id":"../x"}' }), undefined, 't')).toBe(hashed('../x'));
    // Nothing usable in metadata (an empty id, a JSON object without a session id): the content hash.
    for (const none of ['', '   ', '{"session_id":5}']) expect(resolveSessionKey(anth({ user_id: none }), undefined, 't')).toBe(derived);
  });

  it('reads a session header that names nothing as an id, hashed whole, as /expand reads it', () => {
    const whole = (id: string) => `t:h-${createHash('sha256').update(id.trim()).digest('hex').slice(0, 32)}`;
    for (const none of ['', ' ', '   ', '{"$gt": ""}', '{"session_id":5}']) {
      const key = resolveSessionKey(anth({ user_id: 'safe-id' }), none, 't');
      expect([none, key]).toEqual([none, whole(none)]);
      expect([none, `t:${namedSessionBase(none)}`]).toEqual([none, key]);
    }
    // Blank is blank however much of it (a header value arrives trimmed, a query value may not).
    expect(namedSessionBase(' ')).toBe(namedSessionBase(''));
    expect(namedSessionBase('{"$gt": ""}')).not.toBe(namedSessionBase(''));
    expect(namedSessionBase('{"session_id":"abc"}')).toBe('abc');
  });

  it('reads an over-long JSON-looking user_id as an id, hashed', () => {
    const big = JSON.stringify({ session_id: 'ok', pad: 'x'.repeat(1100) });
    expect(resolveSessionKey(anth({ user_id: big }), undefined, 't')).toBe(
      `t:h-${createHash('sha256').update(big).digest('hex').slice(0, 32)}`,
    );
  });

  it('hashes system head and first user text when no id is given, as the alias does', () => {
    const view = decodeRequest(
      'openai',
      JSON.stringify({
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'task' },
          { role: 'system', content: 'later' },
        ],
      }),
    );
    expect(resolveSessionKey(view, undefined, 'ten')).toBe(`ten:${hash16('sys\x00task')}`);
    expect(resolveSessionKey(anth(null), undefined, 'ten')).toBe(`ten:${hash16('You are Claude Code.\x00fix the bug')}`);
  });

  it('keeps exactly 1–128 chars of [A-Za-z0-9._:-], not all dots; hashes the rest', () => {
    expect(sessionIdBase('x'.repeat(128))).toBe('x'.repeat(128));
    expect(sessionIdBase('.a.')).toBe('.a.');
    expect(sessionIdBase('....')).toMatch(/^h-[0-9a-f]{32}$/);
    expect(sessionIdBase('x'.repeat(129))).toMatch(/^h-[0-9a-f]{32}$/);
    expect(sessionIdBase(' ')).toBeNull();
  });
});
