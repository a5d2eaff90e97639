// The end of an answer that withheld expand calls: the calls of its last round (beside the
// client's own calls, or left at the round limit) are resolved now, and the answer's trail goes to
// the session before the client has the answer, so its next turn carries the originals back.
import { frozenSlot, type HotStore } from '@context-guru/components';
import {
  resolveCalls,
  type ExpandBudget,
  type ModelTurn,
  splitCalls,
  type Dialect,
  type ExpandHooks,
  buildResponsesTrails,
  buildResponsesChains,
  type ResponsesChain,
  type ResponsesTrail,
  buildTrail,
  TRAIL_COMPONENT,
  type AnswerRound,
  type Trail,
} from '@context-guru/engine';

export async function saveTrail(
  dialect: Dialect,
  rounds: readonly AnswerRound[],
  last: ModelTurn,
  hooks: ExpandHooks,
  budget: ExpandBudget,
): Promise<void> {
  // Gemini answers leave no trail yet (docs/gemini.md): a later turn carries the client's bytes.
  if (!hooks.onTrail || dialect === 'gemini') return;
  const calls = splitCalls(dialect, last.json).expand;
  if (rounds.length === 0 && calls.length === 0) return;
  const results = calls.length ? await resolveCalls(calls, hooks, budget) : [];
  const all = [...rounds, { turn: last, results }];
  // A Responses answer may leave one trail per client-visible item; the other dialects one per answer.
  // A Responses answer also says which stored response each earlier round's id was continued as.
  const trails =
    dialect === 'responses' ? [...(buildResponsesTrails(all) ?? []), ...buildResponsesChains(rounds, last)] : [buildTrail(dialect, all)];
  // A trail that cannot be saved costs the model the original on later turns, never the answer.
  for (const trail of trails) if (trail) await hooks.onTrail(trail).catch(() => undefined);
}

/** Freezes trails with the session's decisions (hot store, and the durable checkpoint behind it). */
export function trailSaver(
  store: Pick<HotStore, 'commitSession'>,
  tenant: string,
  session: string,
): (trail: Trail | ResponsesTrail | ResponsesChain) => Promise<void> {
  return (trail) =>
    store.commitSession(tenant, session, {
      frozen: new Map([[frozenSlot(TRAIL_COMPONENT, trail.anchor), JSON.stringify(trail)]]),
      offloaded: false,
    });
}
