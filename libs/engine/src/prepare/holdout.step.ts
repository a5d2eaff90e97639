// The request path's holdout step, between opening the session and running the pipeline: the
// session's arm, and what this turn contributes to the measured saving. A holdout session is then
// forwarded exactly as a bypassed one is (the pristine inbound bytes: no component, no expand
// tool, no cache breakpoint added, no marker); its arm is written before it goes, on its first turn.
import { totalTokens } from '@context-guru/components';
import type { OpenedSession } from './session-open.step';
import type { Preparing } from './prepare.types';
import { assignArm, type ArmDecision } from '../session/arm';
import type { Decoded } from './prepare.types';

export async function holdoutStep(p: Preparing, d: Decoded, s: OpenedSession): Promise<ArmDecision> {
  const { tenant } = p.input;
  const holdout = tenant.built.holdout;
  const decision = assignArm(tenant.id, d.session, s.loaded.snapshot.arm, s.prev !== null, holdout?.fraction);
  // Marked (stats, metrics, traces) where there is something to tell: a tenant measuring, or a holdout.
  if (holdout || decision.arm === 'holdout') p.report.arm = decision.arm;
  // Counted identically in both arms, before any component (memoised by content: cheap on warm turns).
  if (holdout) p.report.measured = { version: tenant.configVersion, inputTokens: totalTokens(d.view.messages) };
  if (decision.arm === 'holdout' && decision.record) {
    await p.deps.store.commitSession(tenant.id, d.session, { frozen: new Map(), offloaded: false, arm: 'holdout' });
  }
  return decision;
}
