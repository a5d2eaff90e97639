// One request body prepared exactly as the gateway prepares it (its own prepareRequest) but
// detached from everything shared: a KeepNothingStore instead of the hot store, no turn cache, no
// models (model-backed components degrade as documented), a silent log. The admin's dry-run and
// the shadow evaluation both run through here, so what they report is what the gateway would do.
import { systemClock, type Clock } from '@context-guru/components';
import type { Logger } from '../observability/logger';
import { prepareRequest, type Prepared } from '../proxy/prepare-request';
import type { TenantRuntime } from '../tenancy/tenant-runtime';
import type { Dialect } from '../wire/wire.types';
import { KeepNothingStore } from './keep-nothing.store';

export interface DetachedRun {
  prepared: Prepared;
  /** What the run would have written, kept here and dropped with it. */
  store: KeepNothingStore;
}

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Decoding errors propagate (not a valid request of `dialect`); everything after fails open as on the hot path. */
export async function prepareDetached(
  runtime: TenantRuntime,
  dialect: Dialect,
  raw: string,
  clock: Clock = systemClock,
): Promise<DetachedRun> {
  const store = new KeepNothingStore();
  const prepared = await prepareRequest(
    { store, clock, log: quiet, injectMode: 'auto' },
    { route: dialect, dialect, raw, tenant: runtime, pipeline: runtime.built.pipeline, cacheMode: 'auto', bypassHeader: false },
  );
  return { prepared, store };
}
