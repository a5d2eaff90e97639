// Resolves the tenant of a request: the TenantDirectory (tenant-directory.ts) answers from its
// in-memory cache of keys; without a control plane it holds none and every request gets its
// fallback, the tenant built from PRESET / CONFIG. Resolution is synchronous on purpose: the hot path never waits on a store.
import { GatewayError } from '../http/error-codes';
import { type TenantRuntime } from '@context-guru/engine';

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
