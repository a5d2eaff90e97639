// Step 5: a marker may only leave once its original is acknowledged by the store every replica
// reads — the stash, the session's new decisions and this turn's rewrites are written together.
import type { SessionSnapshot } from '@context-guru/components';
import { commitTurn } from '@context-guru/storage';
import type { Encoded } from './encode.step';
import type { PipelineRan } from './pipeline-run.step';
import type { TurnAt } from './session-open.step';
import type { Preparing } from './prepare.types';
import type { Decoded } from './prepare.types';

/**
 * `recordArm`: the session's first turn under a holdout records its (treated) arm with its state.
 * Resolves null once written; or, when the store knew something about the keys the run could not
 * ask for up front, with that knowledge — nothing was written and the turn must run again on it.
 */
export async function flushStep(
  p: Preparing,
  d: Decoded,
  at: TurnAt,
  ran: PipelineRan,
  e: Encoded,
  recordArm = false,
): Promise<SessionSnapshot | null> {
  const { deps, input, report } = p;
  const { stash, state, snapshot } = ran;
  const flushStart = performance.now();
  const commit = state.newFrozen.size > 0 || (e.offered && !snapshot.offloaded) || recordArm;
  const known = await commitTurn(deps.store, input.tenant.id, {
    session: d.session,
    conversation: at.conversation,
    stash: stash.entries.size ? stash.list() : [],
    ...(commit && { writes: { frozen: state.newFrozen, offloaded: e.offered, ...(recordArm && { arm: 'treated' as const }) } }),
    ...(e.rewritten.length > 0 && { rewritten: e.rewritten }),
    unknown: ran.unknown,
    seen: snapshot,
  });
  if (known) return known;
  report.marks = {
    pipelineStart: ran.pipelineStart,
    pipelineEnd: ran.pipelineEnd,
    flushStart,
    flushEnd: performance.now(),
    stashed: stash.entries.size,
  };
  return null;
}
