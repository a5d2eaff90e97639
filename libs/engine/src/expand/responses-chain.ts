// An answer stitched from expand rounds is several stored responses upstream (store: true): round
// 1's ends in a context_guru_expand call that only the next round answers. A client may chain on
// any id it saw — response.created names round 1 — and the provider refuses that chain (its stored
// history leaves a call unanswered). So each earlier round's id is frozen with the session as
// continued by the last round's, and a later request's previous_response_id naming one is
// forwarded as the last round's id: one value rewritten, every other byte as received.
import { contentKey, frozenSlot, type SessionSnapshot } from '@context-guru/components';
import type { Edit, WireView } from '../wire/wire.types';
import { isObject, parseJson } from './json-shape';
import type { AnswerRound, ModelTurn, ResponsesChain } from './expand.types';
import { TRAIL_COMPONENT } from './trail';

const VERSION = 1;

/** The frozen slot's content key for response `id` (beside the trails, under their component). */
function chainAnchor(id: string): string {
  return contentKey(JSON.stringify([`${TRAIL_COMPONENT}/responses-chain`, id]));
}

const idOf = (turn: ModelTurn): string | undefined => {
  const id = isObject(turn.json) ? turn.json['id'] : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
};

/** One record per earlier round whose id differs from the last round's (none without rounds or ids). */
export function buildResponsesChains(rounds: readonly AnswerRound[], last: ModelTurn): ResponsesChain[] {
  const final = idOf(last);
  if (final === undefined) return [];
  const earlier = new Set(rounds.map((r) => idOf(r.turn)).filter((id): id is string => id !== undefined && id !== final));
  return [...earlier].map((id) => ({ v: VERSION, dialect: 'responses', kind: 'chain', anchor: chainAnchor(id), final }));
}

const previousId = (view: WireView): string | undefined => {
  const id = view.body.previous_response_id;
  return typeof id === 'string' ? id : undefined;
};

/** The content key to load with the session when the request continues a stored response. */
export function responsesChainKeys(view: WireView): string[] {
  const id = previousId(view);
  return id === undefined ? [] : [chainAnchor(id)];
}

function parseChain(text: string | undefined): ResponsesChain | null {
  const c = text === undefined ? undefined : parseJson(text);
  if (!isObject(c) || c['v'] !== VERSION || c['kind'] !== 'chain' || typeof c['final'] !== 'string') return null;
  return c as unknown as ResponsesChain;
}

/** The edit of previous_response_id's value to the id its response was continued as; none when not known. */
export function responsesChainEdits(view: WireView, snapshot: SessionSnapshot): Edit[][] {
  const id = previousId(view);
  if (id === undefined) return [];
  const chain = parseChain(snapshot.frozen.get(frozenSlot(TRAIL_COMPONENT, chainAnchor(id))));
  const span = view.index.topLevel('previous_response_id');
  if (!chain || !span || chain.final === id) return [];
  return [[{ start: span.start, end: span.end, text: JSON.stringify(chain.final) }]];
}
