// What prepareRequest depends on, as a bench or an in-process test wires it: the given store, a
// turn cache, the system clock, a logger that drops everything, the expand tool offered as usual,
// and one LearnedKeys for every request — as the gateway context has (without it each request
// learns only for itself, and every turn bringing reformatted content is run twice).
import { systemClock, type HotStore } from '@context-guru/components';
import { createLogger } from '../../libs/engine/src/logger';
import type { PrepareDeps } from '../../libs/engine/src/prepare-request';
import { LearnedKeys } from '../../libs/engine/src/session/session-run';
import { TurnCache } from '../../libs/engine/src/wire/turn-cache';

export function prepareDeps(store: HotStore, learned = new LearnedKeys()): PrepareDeps {
  return { store, turns: new TurnCache(), clock: systemClock, log: createLogger('error', () => undefined), injectMode: 'auto', learned };
}
