// One request body prepared exactly as the gateway prepares it (its own prepareRequest) but
// detached from everything shared: a private store instead of the hot store — a KeepNothingStore
// (the dry-run: a first turn) or the shadow's own session memory — no turn cache, no models
// (model-backed components degrade as documented), a silent log. The admin's dry-run and the
// shadow evaluation both run through here, so what they report is what the gateway would do.
import { systemClock, type Clock, type HotStore } from '@context-guru/components';
import type { Logger } from '../logger';
import { prepareRequest, type Prepared } from '../prepare-request';
import type { TenantRuntime } from '../tenancy/tenant-runtime';
import type { Dialect } from '../wire/wire.types';
import { KeepNothingStore } from './keep-nothing.store';

export interface DetachedRun<S extends HotStore = KeepNothingStore> {
  prepared: Prepared;
  /** What the run read and wrote (a KeepNothingStore keeps its writes here and drops them with it). */
  store: S;
}

export interface DetachedOptions<S extends HotStore> {
  clock?: Clock;
  store?: S;
  /** The client's x-context-guru-session, so the run resolves the request's own session key. */
  sessionHeader?: string;
}

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Decoding errors propagate (not a valid request of `dialect`); everything after fails open as on the hot path. */
export async function prepareDetached<S extends HotStore = KeepNothingStore>(
  runtime: TenantRuntime,
  dialect: Dialect,
  raw: string,
  o: DetachedOptions<S> = {},
): Promise<DetachedRun<S>> {
  const store = o.store ?? (new KeepNothingStore() as HotStore as S);
  const prepared = await prepareRequest(
    { store, clock: o.clock ?? systemClock, log: quiet, injectMode: 'auto' },
    {
      route: dialect,
      dialect,
      raw,
      tenant: runtime,
      pipeline: runtime.built.pipeline,
      cacheMode: 'auto',
      bypassHeader: false,
      sessionHeader: o.sessionHeader,
    },
  );
  return { prepared, store };
}
