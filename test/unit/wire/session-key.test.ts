// A session key is tenant-scoped and an explicit id is only trusted when path-safe; a bad id
// silently falls back, so the request never fails because of it.
import { createHash } from 'node:crypto';
import { decodeRequest } from '../../../apps/gateway/src/wire/request.wire';
import { resolveSessionKey, sanitizeSessionId, sessionAlias } from '../../../apps/gateway/src/wire/session-key';
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

  it('falls back past unsafe ids to the next candidate, then to the content hash', () => {
    const derived = `t:${hash16('You are Claude Code.\x00fix the bug')}`;
    expect(resolveSessionKey(anth({ user_id: 'safe-id' }), '../../etc', 't')).toBe('t:safe-id');
    for (const bad of ['../../etc', '...', '.', '', '   ', 'a b', 'x'.repeat(129), 'é', 'a/b', '{"session_id":"../x"}', '{not json', '{"session_id":5}']) {
      expect([bad, resolveSessionKey(anth({ user_id: bad }), bad, 't')]).toEqual([bad, derived]);
    }
  });

  it('ignores a JSON user_id over 1024 bytes', () => {
    const big = JSON.stringify({ session_id: 'ok', pad: 'x'.repeat(1100) });
    expect(resolveSessionKey(anth({ user_id: big }), undefined, 't')).toBe(`t:${hash16('You are Claude Code.\x00fix the bug')}`);
  });

  it('hashes system head and first user text when no id is given, as the alias does', () => {
    const view = decodeRequest(
      'openai',
      JSON.stringify({ messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'task' }, { role: 'system', content: 'later' }] }),
    );
    expect(resolveSessionKey(view, undefined, 'ten')).toBe(`ten:${hash16('sys\x00task')}`);
    expect(sessionAlias(view, 'ten')).toBe(resolveSessionKey(view, undefined, 'ten'));
    expect(resolveSessionKey(anth(null), undefined, 'ten')).toBe(`ten:${hash16('You are Claude Code.\x00fix the bug')}`);
  });

  it('sanitizes exactly to 1–128 chars of [A-Za-z0-9._:-], not all dots', () => {
    expect(sanitizeSessionId('x'.repeat(128))).toBe('x'.repeat(128));
    expect(sanitizeSessionId('.a.')).toBe('.a.');
    expect(sanitizeSessionId('....')).toBeNull();
  });
});
