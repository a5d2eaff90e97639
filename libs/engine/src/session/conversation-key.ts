// The cache boundary belongs to one conversation, not to a session id: agents send side requests
// under their session id (Claude Code's title and quota probes, sub-agents with their own system
// prompt), and letting those overwrite the main conversation's turn record would make its whole
// cached prefix look new — the next turn would then rewrite at depth and bust the provider cache.
import type { KeyedNames } from '@context-guru/components';
import { derivedSessionBase } from '../wire/session-key';
import type { WireView } from '../wire/wire.types';

/**
 * The key the turn record is kept under: the session, narrowed by the conversation's alias (hash
 * of system head and first user text) when the session id was explicit. A new first user text is
 * a new conversation to the provider too (its message prefix shares nothing), so starting it with
 * no recorded turn — everything uncached, never cold — is exactly right.
 */
export function conversationKey(session: string, view: Pick<WireView, 'systemHead' | 'firstUserText'>, names?: KeyedNames): string {
  const alias = derivedSessionBase(view, names);
  return session.endsWith(`:${alias}`) ? session : `${session}#${alias}`;
}
