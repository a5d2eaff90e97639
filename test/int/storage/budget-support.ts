// What the byte-budget tests share (Redis hot store, archive): entries of a given size, a turn's
// writes, and one turn of an agent session run through prepareRequest against a store.
import { emptySnapshot, type HotStore, type SessionSnapshot, type StashEntry } from '@context-guru/components';
import { createLogger } from '../../../libs/engine/src/logger';
import { prepareRequest } from '../../../libs/engine/src/prepare-request';
import { createTenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { agentSteps, anthropicTurn } from '../../support/transcripts';

export const entry = (id: string, bytes: number): StashEntry => ({ id, text: id.slice(0, 1).repeat(bytes) });

export const turn = (session: string, stash: StashEntry[], seen: SessionSnapshot = emptySnapshot()) => ({
  session,
  conversation: session,
  stash,
  unknown: [],
  seen,
});

/** Turn `t` of one 16-step agent session of `tenant` (preset agent, session `budgeted`) against `store`. */
export function budgetedSession(tenant: string) {
  const steps = agentSteps(16, 9);
  const runtime = createTenantRuntime(tenant, { preset: 'agent' }, 1);
  const send = (store: HotStore, t: number) =>
    prepareRequest(
      { store, clock: { now: () => Date.now() }, log: createLogger('error', () => undefined), injectMode: 'auto' },
      {
        route: 'anthropic',
        dialect: 'anthropic',
        raw: JSON.stringify(anthropicTurn(steps, t)),
        tenant: runtime,
        pipeline: runtime.built.pipeline,
        cacheMode: 'auto',
        sessionHeader: 'budgeted',
        bypassHeader: false,
      },
    );
  return { steps, send };
}
