// Step 1: the inbound text becomes a normalized view (reusing the previous turn's decode for the
// byte-identical prefix), its session, and the decision whether the pipeline runs at all.
// Decoding errors propagate: the caller answers them 400 in the dialect's shape.
import { Pipeline } from '@context-guru/components';
import { isAgentCompaction } from '../session/agent-compaction';
import { decodeRequest } from '../wire/request.wire';
import { resolveSessionKey } from '../wire/session-key';
import type { Preparing, Decoded } from './prepare.types';
import { sessionHash } from '../session/session-point';

/** The report's session and its traced hash (keyed when the tenant's names are). */
export function nameSession(p: Preparing, session: string): void {
  p.report.session = session;
  p.report.sessionHash = p.names ? p.names.name('trace', session) : sessionHash(session);
}

// A shed request runs no component: replayForwarded then restores every forwarded record on the
// cached prefix (they carry another revision than this empty pipeline's).
const SHED_PIPELINE = new Pipeline([]);

export function decodeStep(p: Preparing): Decoded {
  const { deps, input, report } = p;
  const turn = deps.turns
    ? deps.turns.decode(input.dialect, input.text ?? input.raw, input.tenant.id)
    : { view: decodeRequest(input.dialect, input.raw), reuse: null };
  const view = turn.view;
  const session = resolveSessionKey(view, input.sessionHeader, input.tenant.id, input.conversationHeader, p.names);
  nameSession(p, session);
  if (typeof view.body.model === 'string') report.model = view.body.model;
  const bypass = input.bypassHeader || isAgentCompaction(view.messages);
  report.shed = input.shed === true;
  report.bypassed = bypass;
  return { turn, view, session, bypass, running: input.shed ? SHED_PIPELINE : input.pipeline };
}
