// Resolves the tenant of a request. Until the control plane lands there is one tenant built from
// PRESET / CONFIG; the resolver is the seam where keyed tenants plug in without touching the proxy.
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
