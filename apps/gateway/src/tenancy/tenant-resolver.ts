// Resolves the tenant of a request. Without a control plane there is one tenant built from
// PRESET / CONFIG; with one, the TenantDirectory (tenant-directory.ts) answers from its
// in-memory cache. Resolution is synchronous on purpose: the hot path never waits on a store.
import { GatewayError } from '../error-codes';
import type { TenantRuntime } from './tenant-runtime';

export interface TenantHeaders {
  [name: string]: string | string[] | undefined;
}

/** The request names no tenant it may act for: 401 `tenant_auth`, or 403 `tenant_forbidden`. */
export class TenantAuthError extends GatewayError {
  constructor(code: 'tenant_auth' | 'tenant_forbidden', message: string) {
    super(code, message);
    this.name = 'TenantAuthError';
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
