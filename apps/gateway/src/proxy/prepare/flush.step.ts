// Step 5: a marker may only leave once its original is acknowledged by the store every replica
// reads — the stash, the session's new decisions and this turn's rewrites are written together.
import type { Decoded } from './decode.step';
import type { Encoded } from './encode.step';
import type { PipelineRan } from './pipeline-run.step';
import type { TurnAt } from './session-open.step';
import type { Preparing } from './prepare.types';

export async function flushStep(p: Preparing, d: Decoded, at: TurnAt, ran: PipelineRan, e: Encoded): Promise<void> {
  const { deps, input, report } = p;
  const tenant = input.tenant.id;
  const { stash, state, snapshot } = ran;
  const flushStart = performance.now();
  await Promise.all([
    stash.entries.size ? deps.store.putStash(tenant, d.session, stash.list()) : undefined,
    state.newFrozen.size || (e.offered && !snapshot.offloaded)
      ? deps.store.commitSession(tenant, d.session, { frozen: state.newFrozen, offloaded: e.offered })
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
