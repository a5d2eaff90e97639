// Sessions named before derived names were keyed (docs/security.md, keyed names). A session that
// sent no id is named by a digest of its system head and first user text, and an explicit
// session's conversations by the same digest as their alias; both are now keyed with the tenant's
// key. A session started before that keeps its state under the unkeyed names, and renaming it at
// upgrade would lose its turn record and decisions: its next turn would look new and rewrite
// what the provider cached. So a continuing request (it carries an assistant turn) whose
// conversation this process has not resolved yet is looked up under the unkeyed names too; when
// the store holds a turn record there, the session goes on under those names until it ends, and
// only sessions started since are keyed. Nothing is copied or rewritten.
import { deleteOldest } from '@context-guru/components';
import { conversationKey } from '../session/conversation-key';
import { derivedSessionBase } from '../wire/session-key';
import { nameSession } from './decode.step';
import type { TurnAt } from './session-open.step';
import type { Decoded, Preparing } from './prepare.types';

interface Names {
  session: string;
  conversation: string;
}

/** Conversations this process resolved (tenant NUL keyed conversation → the names it goes on under). */
const resolved = new Map<string, Names>();
const RESOLVED_ENTRIES = 100_000;

/** The names the turn goes on under: the keyed ones, or the unkeyed ones a live session holds. */
export async function legacyNames(p: Preparing, d: Decoded, at: TurnAt): Promise<[Decoded, TurnAt]> {
  const store = p.deps.store;
  if (!p.names || !store.hasTurn || !d.view.messages.some((m) => m.role === 'assistant')) return [d, at];
  const tenant = p.input.tenant.id;
  const memo = `${tenant}\u0000${at.conversation}`;
  let names = resolved.get(memo);
  if (!names) {
    const derived = d.session === `${tenant}:${derivedSessionBase(d.view, p.names)}`;
    const session = derived ? `${tenant}:${derivedSessionBase(d.view)}` : d.session;
    const old = { session, conversation: conversationKey(session, d.view) };
    names = (await store.hasTurn(tenant, old.conversation)) ? old : { session: d.session, conversation: at.conversation };
    resolved.set(memo, names);
    if (resolved.size > RESOLVED_ENTRIES) deleteOldest(resolved);
  }
  if (names.conversation === at.conversation) return [d, at];
  nameSession(p, names.session);
  return [
    { ...d, session: names.session },
    { ...at, conversation: names.conversation },
  ];
}
