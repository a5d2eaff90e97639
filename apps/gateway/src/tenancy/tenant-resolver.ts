// Resolves the tenant of a request. Without a control plane there is one tenant built from
// PRESET / CONFIG; with one, the TenantDirectory (tenant-directory.ts) answers from its
// in-memory cache. Resolution is synchronous on purpose: the hot path never waits on a store.
import type { TenantRuntime } from './tenant-runtime';

export interface TenantHeaders {
  [name: string]: string | string[] | undefined;
}

export class TenantAuthError extends Error {
  constructor(
    readonly status: 401 | 403,
    message: string,
  ) {
    super(message);
  }
}

export interface TenantResolver {
  resolve(headers: TenantHeaders): TenantRuntime;
  all(): TenantRuntime[];
}

export class SingleTenantResolver implements TenantResolver {
  constructor(private runtime: TenantRuntime) {}

  resolve(): TenantRuntime {
    return this.runtime;
  }

  all(): TenantRuntime[] {
    return [this.runtime];
  }

  replace(runtime: TenantRuntime): void {
    this.runtime = runtime;
  }
}
