// Step 5: a marker may only leave once its original is acknowledged by the store every replica
// reads — the stash, the session's new decisions and this turn's rewrites are written together.
import type { Decoded } from './decode.step';
import type { Encoded } from './encode.step';
import type { PipelineRan } from './pipeline-run.step';
import type { TurnAt } from './session-open.step';
import type { Preparing } from './prepare.types';

/** `recordArm`: the session's first turn under a holdout records its (treated) arm with its state. */
export async function flushStep(p: Preparing, d: Decoded, at: TurnAt, ran: PipelineRan, e: Encoded, recordArm = false): Promise<void> {
  const { deps, input, report } = p;
  const tenant = input.tenant.id;
  const { stash, state, snapshot } = ran;
  const flushStart = performance.now();
  await Promise.all([
    stash.entries.size ? deps.store.putStash(tenant, d.session, stash.list()) : undefined,
    state.newFrozen.size || (e.offered && !snapshot.offloaded) || recordArm
      ? deps.store.commitSession(tenant, d.session, { frozen: state.newFrozen, offloaded: e.offered, ...(recordArm && { arm: 'treated' }) })
      : undefined,
    e.rewritten.length ? deps.store.recordRewrites(tenant, at.conversation, e.rewritten) : undefined,
  ]);
  report.marks = {
    pipelineStart: ran.pipelineStart,
    pipelineEnd: ran.pipelineEnd,
    flushStart,
    flushEnd: performance.now(),
    stashed: stash.entries.size,
  };
}
