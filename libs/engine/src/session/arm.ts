// Which arm a session belongs to. A new session is held out when its point — a hash of tenant and
// session key mapped to [0, 1) — lies below the tenant's holdout fraction: every replica, after
// any restart or Redis flush, computes the same arm for the same session and fraction. The arm is
// recorded with the session's state at its first sight and never changes afterwards; a session
// already known (its turn record exists) without a recorded arm was served treated, so it stays
// treated. Raising the fraction from f to g therefore holds out new sessions with a point below g;
// sessions seen before keep their arm.
import type { Arm } from '@context-guru/components';
import { sessionPoint } from './session-point';

/**
 * The session's point in [0, 1): the first 32 bits of SHA-256(tenant NUL session key).
 * @internal exported for tests
 */
export function armPoint(tenant: string, session: string): number {
  return sessionPoint(tenant, session);
}

export interface ArmDecision {
  arm: Arm;
  /** The tenant measures and the store holds no arm for the session yet: this turn records it. */
  record: boolean;
}

/**
 * `recorded`: the arm in the session's state; `known`: the session has been served before (its
 * conversation has a turn record); `fraction`: the tenant's holdout share of new sessions, absent
 * when the tenant runs no holdout (then nothing is recorded, and a recorded holdout still holds).
 */
export function assignArm(tenant: string, session: string, recorded: Arm | undefined, known: boolean, fraction?: number): ArmDecision {
  if (recorded) return { arm: recorded, record: false };
  if (fraction === undefined) return { arm: 'treated', record: false };
  const held = !known && fraction > 0 && armPoint(tenant, session) < fraction;
  return { arm: held ? 'holdout' : 'treated', record: true };
}
